// Reading the documentation the way a reader (and GitHub) does: its headings and their anchors, its
// links, and its code blocks, so tests can check links and run the commands the guides show.
import { marked, type Token, type Tokens } from "marked";

export const ROOT = new URL("../../", import.meta.url);

/** README.md, CHANGELOG.md, BENCHMARKS.md, RELIABILITY.md and every Markdown file under docs/. */
export async function documentationFiles(): Promise<string[]> {
  const files = ["README.md", "CHANGELOG.md", "BENCHMARKS.md", "RELIABILITY.md"];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(new URL(dir, ROOT))) {
      const path = `${dir}${e.name}`;
      if (e.isDirectory) await walk(`${path}/`);
      else if (e.name.endsWith(".md")) files.push(path);
    }
  };
  await walk("docs/");
  return files.sort();
}

export interface CodeBlock {
  lang: string;
  text: string;
  /** 1-based line of the opening fence. */
  line: number;
}

/** Fenced code blocks, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: { fence: string; lang: string; line: number; lines: string[] } | undefined;
  markdown.split("\n").forEach((line, i) => {
    const fence = line.match(/^(\s*)(`{3,}|~{3,})(.*)$/);
    if (!open && fence) {
      open = { fence: fence[2]!, lang: fence[3]!.trim(), line: i + 1, lines: [] };
    } else if (open && fence && fence[2]!.startsWith(open.fence) && fence[3]!.trim() === "") {
      blocks.push({ lang: open.lang, text: open.lines.join("\n"), line: open.line });
      open = undefined;
    } else if (open) {
      open.lines.push(line);
    }
  });
  return blocks;
}

/** The text outside fenced code blocks and inline code spans (where links and headings live). */
export function prose(markdown: string): string {
  const lines = markdown.split("\n");
  let inFence: string | undefined;
  return lines.map((line) => {
    const fence = line.match(/^\s*(`{3,}|~{3,})/);
    if (fence) {
      if (!inFence) inFence = fence[1];
      else if (fence[1]!.startsWith(inFence)) inFence = undefined;
      return "";
    }
    return inFence ? "" : line.replace(/(`+)[\s\S]*?\1/g, (m) => " ".repeat(m.length));
  }).join("\n");
}

/**
 * GitHub's anchor for a heading: the rendered text lower-cased, with everything but letters, marks,
 * numbers, connector punctuation (`_`), hyphens and spaces removed, and spaces turned into hyphens.
 */
export function slug(headingText: string): string {
  const text = headingText
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link renders as its text
    .replace(/<[^>]+>/g, "");
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "").replace(/ /g, "-");
}

/** Every anchor a file's headings produce, with GitHub's -1, -2 suffixes for repeated ones. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const lines = markdown.split("\n");
  let inFence: string | undefined;
  for (const line of lines) {
    const fence = line.match(/^\s*(`{3,}|~{3,})/);
    if (fence) {
      if (!inFence) inFence = fence[1];
      else if (fence[1]!.startsWith(inFence)) inFence = undefined;
      continue;
    }
    if (inFence) continue;
    const h = line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!h) continue;
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export interface Link {
  target: string;
  line: number;
}

/** Inline links and images outside code: `[text](target)`. */
export function links(markdown: string): Link[] {
  const out: Link[] = [];
  prose(markdown).split("\n").forEach((line, i) => {
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      out.push({ target: m[1]!, line: i + 1 });
    }
  });
  return out;
}

/** The code block between `<!-- name:start -->` and `<!-- name:end -->`. */
export function markedBlock(markdown: string, name: string): string {
  const m = markdown.match(new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)<!-- ${name}:end -->`));
  if (!m) throw new Error(`no ${name}:start/end block`);
  const blocks = codeBlocks(m[1]!);
  if (blocks.length !== 1) throw new Error(`the ${name} block holds ${blocks.length} code blocks, not 1`);
  return blocks[0]!.text;
}

/**
 * The `docs/….md[#anchor]` pointers in the comments of a source file. `kind` is its comment syntax:
 * "ts" (`//` and `/* … *\/`, also for C and CSS), "sql" (`--`) or "sh" (`#`). A `//` or `#` counts only
 * at the start of a line or after a space, so neither `https://…` nor an anchor after a path starts one.
 */
export function commentPointers(source: string, kind: "ts" | "sql" | "sh" | string): Link[] {
  const out: Link[] = [];
  let inBlock = false;
  source.split("\n").forEach((line, i) => {
    const comments: string[] = [];
    if (kind === "sql") {
      const at = line.indexOf("--");
      if (at >= 0) comments.push(line.slice(at));
    } else if (kind === "sh") {
      const m = line.match(/(^|\s)#/);
      if (m) comments.push(line.slice(m.index! + m[1]!.length));
    } else {
      let rest = line;
      while (rest) {
        if (inBlock) {
          const end = rest.indexOf("*/");
          comments.push(end < 0 ? rest : rest.slice(0, end));
          if (end < 0) break;
          inBlock = false;
          rest = rest.slice(end + 2);
          continue;
        }
        const m = rest.match(/(^|\s)(\/\/|\/\*)/);
        if (!m) break;
        const start = m.index! + m[1]!.length;
        if (m[2] === "//") {
          comments.push(rest.slice(start));
          break;
        }
        inBlock = true;
        rest = rest.slice(start + 2);
      }
    }
    for (const comment of comments) {
      for (const m of comment.matchAll(/(?<![\w./-])docs\/[\w./-]*?\.md(?:#[\w-]+)?/g)) {
        out.push({ target: m[0], line: i + 1 });
      }
    }
  });
  return out;
}

export interface RenderProblem {
  /** 1-based line of the fence or text the problem starts at. */
  line: number;
  problem: string;
}

/**
 * What goes wrong when the Markdown is rendered (by marked, a CommonMark renderer, as GitHub renders
 * it): a fenced code block that is never closed runs to the end of the file, turning the rest into
 * code; a fence that lost its opening pair shows up as stray backticks in the text. Both come from one
 * missing fence line, so both are reported.
 */
export function renderProblems(markdown: string): RenderProblem[] {
  const problems: RenderProblem[] = [];
  const lineAt = (offset: number) => markdown.slice(0, offset).split("\n").length;
  const visit = (tokens: Token[], base: number) => {
    let at = base;
    for (const token of tokens) {
      const start = markdown.indexOf(token.raw, at);
      const where = start >= 0 ? start : at;
      if (token.type === "code" && token.codeBlockStyle !== "indented") {
        const fence = token.raw.match(/^\s*(`{3,}|~{3,})/)?.[1] ?? "```";
        const lines = token.raw.replace(/\n+$/, "").split("\n");
        const last = lines.at(-1)!.trim();
        if (lines.length < 2 || !last.startsWith(fence) || last.replace(/[`~]/g, "") !== "") {
          problems.push({
            line: lineAt(where),
            problem: `a ${fence} code block that is never closed (everything after it renders as code)`,
          });
        }
      } else if (token.type === "paragraph" || token.type === "text") {
        const stray = token.raw.search(/(^|\n)\s*(`{3,}|~{3,})/);
        if (stray >= 0) {
          problems.push({
            line: lineAt(where + stray) + (token.raw[stray] === "\n" ? 1 : 0),
            problem: "a fence inside a paragraph (its code block lost a fence line)",
          });
        }
      }
      const children = token as { tokens?: Token[]; items?: Token[] };
      if (children.items) visit(children.items, where);
      else if (children.tokens && token.type !== "paragraph") visit(children.tokens, where);
      if (start >= 0) at = start + token.raw.length;
    }
  };
  visit(marked.lexer(markdown), 0);
  return problems;
}

/** A table cell longer than a reader takes in at a glance. */
export interface LongCell {
  /** The first words of the cell's row. */
  row: string;
  length: number;
}

/** The cells of the Markdown's tables (as rendered, so not inside code) over `max` characters of source. */
export function longTableCells(markdown: string, max: number): LongCell[] {
  const out: LongCell[] = [];
  for (const token of marked.lexer(markdown)) {
    if (token.type !== "table") continue;
    const table = token as Tokens.Table;
    for (const row of table.rows) {
      for (const cell of row) {
        if (cell.text.length > max) out.push({ row: row[0]!.text.slice(0, 60), length: cell.text.length });
      }
    }
  }
  return out;
}
