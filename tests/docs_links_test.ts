// Every relative link in the README, BENCHMARKS.md, RELIABILITY.md and docs/ must reach a file of the
// repository, and every #anchor a heading of that file (as GitHub makes anchors), so a reader following
// the guides never lands on nothing. The same holds for the pointers comments in the code make into the
// guides (`@see docs/inbound-webhooks.md#idempotency`), so they cannot rot when a heading is renamed.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  anchors,
  commentPointers,
  documentationFiles,
  links,
  prose,
  ROOT,
  slug,
} from "./helpers/markdown.ts";

async function exists(url: URL): Promise<boolean> {
  try {
    await Deno.stat(url);
    return true;
  } catch {
    return false;
  }
}

Deno.test("GitHub's anchors: punctuation dropped, underscores and hyphens kept, repeats numbered", () => {
  assertEquals(
    slug("Inbound payment webhooks: `checkout-webhook` and `payments-webhook`"),
    "inbound-payment-webhooks-checkout-webhook-and-payments-webhook",
  );
  assertEquals(
    slug("messaging-webhook (`scripts/bench/messaging_webhook.ts`)"),
    "messaging-webhook-scriptsbenchmessaging_webhookts",
  );
  assertEquals(slug("A provider's POST becomes a row"), "a-providers-post-becomes-a-row");
  assertEquals(slug("See [the guide](docs/x.md) now"), "see-the-guide-now");
  assertEquals([...anchors("# A\n## B\n```\n# not a heading\n```\n## B\n")], ["a", "b", "b-1"]);
});

Deno.test("every relative link and anchor in the documentation resolves", async () => {
  const files = await documentationFiles();
  assert(files.length >= 11, `documentation files: ${files.join(", ")}`);
  const anchorsOf = new Map<string, Set<string>>();
  const broken: string[] = [];
  let checked = 0;
  for (const file of files) {
    const text = await Deno.readTextFile(new URL(file, ROOT));
    for (const { target, line } of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not ours to check here
      checked++;
      const [path, anchor] = target.split("#", 2) as [string, string | undefined];
      const url = path ? new URL(path, new URL(file, ROOT)) : new URL(file, ROOT);
      const where = `${file}:${line} -> ${target}`;
      if (!url.href.startsWith(ROOT.href)) {
        broken.push(`${where} (outside the repository)`);
        continue;
      }
      if (!(await exists(url))) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!url.pathname.endsWith(".md")) {
        broken.push(`${where} (an anchor into a file that is not Markdown)`);
        continue;
      }
      if (!anchorsOf.has(url.href)) anchorsOf.set(url.href, anchors(await Deno.readTextFile(url)));
      if (!anchorsOf.get(url.href)!.has(decodeURIComponent(anchor))) {
        broken.push(`${where} (no such heading)`);
      }
    }
  }
  assert(checked > 50, `only ${checked} relative links found`);
  assertEquals(broken, []);
});

Deno.test("pointers into the guides are read from comments only, in each language's comment syntax", () => {
  const ts = [
    "// @see docs/a.md#one",
    'const u = "https://x/docs/b.md#not-a-comment"; // and docs/architecture.md',
    "/* docs/d.md#two",
    " * docs/e.md#three */ docs/f.md#code",
  ].join("\n");
  assertEquals(commentPointers(ts, "ts").map((p) => `${p.line}:${p.target}`), [
    "1:docs/a.md#one",
    "2:docs/architecture.md",
    "3:docs/d.md#two",
    "4:docs/e.md#three",
  ]);
  assertEquals(
    commentPointers("select 'docs/a.md'; -- See docs/b.md#tenancy.\n", "sql").map((p) => p.target),
    ["docs/b.md#tenancy"],
  );
  assertEquals(
    commentPointers('# docs/a.md#x\necho "docs/b.md" # docs/c.md#y\n', "sh").map((p) => p.target),
    ["docs/a.md#x", "docs/c.md#y"],
  );
});

Deno.test("every pointer into docs/ in comments of the code, scripts and tests resolves", async () => {
  const kinds: Record<string, string> = {
    ts: "ts",
    tsx: "ts",
    js: "ts",
    mjs: "ts",
    c: "ts",
    css: "ts",
    sql: "sql",
    sh: "sh",
    toml: "sh",
  };
  const sources: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(new URL(dir, ROOT))) {
      const path = `${dir}${e.name}`;
      if (e.isDirectory) {
        if (!["node_modules", "dist", "artifacts", ".temp"].includes(e.name)) await walk(`${path}/`);
      } else if (kinds[e.name.split(".").pop()!]) sources.push(path);
    }
  };
  for (const dir of ["supabase/", "scripts/", "web/src/", "tests/"]) await walk(dir);
  assert(sources.length > 100, `source files: ${sources.length}`);
  const anchorsOf = new Map<string, Set<string>>();
  const broken: string[] = [];
  let checked = 0;
  for (const file of sources.sort()) {
    const text = await Deno.readTextFile(new URL(file, ROOT));
    for (const { target, line } of commentPointers(text, kinds[file.split(".").pop()!]!)) {
      checked++;
      const [path, anchor] = target.split("#", 2) as [string, string | undefined];
      const where = `${file}:${line} -> ${target}`;
      const url = new URL(path, ROOT);
      if (!(await exists(url))) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!anchorsOf.has(url.href)) anchorsOf.set(url.href, anchors(await Deno.readTextFile(url)));
      if (!anchorsOf.get(url.href)!.has(anchor)) broken.push(`${where} (no such heading)`);
    }
  }
  assert(checked >= 20, `only ${checked} pointers into docs/ found in comments`);
  assertEquals(broken, []);
});

Deno.test("the README links every guide in docs/", async () => {
  const readme = await Deno.readTextFile(new URL("README.md", ROOT));
  const linked = new Set(links(readme).map((l) => l.target.split("#")[0]));
  const guides: string[] = [];
  for await (const e of Deno.readDir(new URL("docs/", ROOT))) {
    if (e.isFile && e.name.endsWith(".md")) guides.push(`docs/${e.name}`);
  }
  assert(guides.length >= 8, guides.join(", "));
  assertEquals(guides.filter((g) => !linked.has(g)).sort(), []);
});

/** `[text](target)` in the prose of `markdown`: the text as a reader sees it (code spans kept). */
function linkTexts(markdown: string): { text: string; target: string; line: number }[] {
  const out: { text: string; target: string; line: number }[] = [];
  const plain = prose(markdown).split("\n");
  markdown.split("\n").forEach((raw, i) => {
    // prose() blanks code blocks and spans in place, so a link found in it sits at the same columns.
    for (const m of plain[i]!.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const close = raw.indexOf("](", m.index!);
      out.push({ text: raw.slice(m.index! + 1, close).replaceAll("`", ""), target: m[1]!, line: i + 1 });
    }
  });
  return out;
}

Deno.test("a link's text names the file it links to: a file name, or a guide's title before a colon", async () => {
  const titles = new Map<string, string>();
  for (const file of await documentationFiles()) {
    const h1 = (await Deno.readTextFile(new URL(file, ROOT))).match(/^# (.+)$/m)?.[1]?.trim();
    if (h1 && file.startsWith("docs/") && !titles.has(h1)) titles.set(h1, file);
  }
  const wrong: string[] = [];
  for (const file of await documentationFiles()) {
    for (const { text, target, line } of linkTexts(await Deno.readTextFile(new URL(file, ROOT)))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue;
      const path = new URL(target.split("#")[0]!, new URL(file, ROOT)).pathname.slice(ROOT.pathname.length);
      const named = text.trim();
      const fileName = /^[\w./-]+\.(md|ts|tsx|sql|json|html|sh|toml|yaml)$/.test(named) ? named : undefined;
      const guide = titles.get(named.split(":")[0]!.trim());
      if (fileName && !`/${path}`.endsWith(`/${fileName.replace(/^(\.\.?\/)+/, "")}`)) {
        wrong.push(`${file}:${line}: [${text}] links to ${path}`);
      } else if (!fileName && guide && guide !== path) {
        wrong.push(`${file}:${line}: [${text}] names ${guide} but links to ${path}`);
      }
    }
  }
  assertEquals(wrong, []);
});
