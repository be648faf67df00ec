// The Supabase CLI commands the guides show (docs/operations.md's deploy steps above all) must run on
// the CLI this repository pins: every command and flag must exist in that CLI's own help, and `db push
// --dry-run` runs against the test database with supabase/config.toml as it is (its [db.vault] and
// [remotes.*] blocks included). A deploy step that names a flag the CLI does not have, as
// `db push --remote` once did, fails here instead of in an operator's terminal.
import { assert, assertEquals } from "./helpers/assert.ts";
import { codeBlocks, documentationFiles, markedBlock, ROOT } from "./helpers/markdown.ts";
import { testDbUrl } from "./helpers/db.ts";
import { CLI_OFFLINE_ENV, SUPABASE_CLI } from "./helpers/supabase_cli.ts";
import { parse } from "smol-toml";

const CLI = SUPABASE_CLI;
const OFFLINE = CLI_OFFLINE_ENV;

export interface CliCommand {
  file: string;
  line: number;
  text: string;
  /** The words after `supabase`, placeholders filled in, environment assignments and comments removed. */
  args: string[];
}

/** Shell words of one command line: quotes kept together, `$(...)` one word, a trailing comment dropped. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "#" && !inWord) break;
    if (c === " " || c === "\t") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      continue;
    }
    inWord = true;
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      word += line.slice(i + 1, end < 0 ? undefined : end);
      i = end < 0 ? line.length : end;
    } else if (c === "$" && line[i + 1] === "(") {
      let depth = 0;
      let j = i;
      for (; j < line.length; j++) {
        if (line[j] === "(") depth++;
        if (line[j] === ")" && --depth === 0) break;
      }
      word += line.slice(i, j + 1);
      i = j;
    } else {
      word += c;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** Every `supabase` (or `npx supabase`) command in the shell blocks of the given Markdown. */
export function cliCommands(file: string, markdown: string): CliCommand[] {
  const out: CliCommand[] = [];
  for (const block of codeBlocks(markdown)) {
    if (!["sh", "bash", "shell", "console"].includes(block.lang)) continue;
    const lines = block.text.replace(/\\\n\s*/g, " ").split("\n");
    lines.forEach((text, i) => {
      const words = shellWords(text.trim());
      while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) words.shift(); // VAR=value
      if (words[0] === "export") return;
      if (words[0] === "npx") words.shift();
      if (!words[0] || !/(^|\/)supabase$/.test(words[0])) return;
      const args = words.slice(1).map((w) => w.replace(/<project-ref>/g, "abcdefghijklmnopqrst"));
      out.push({ file, line: block.line + 1 + i, text: text.trim(), args });
    });
  }
  return out;
}

// The CLI takes about a second to answer even --help, mostly waiting: a few at once (the checks below
// ask some 30 questions; one after another they took 30 s of the suite).
let running = 0;
const waiting: (() => void)[] = [];
async function run(args: string[], env: Record<string, string> = {}) {
  while (running >= 4) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await runNow(args, env);
  } finally {
    running--;
    waiting.shift()?.();
  }
}

async function runNow(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(CLI, {
    args,
    cwd: ROOT.pathname,
    env: { ...OFFLINE, ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, text: d.decode(out.stdout) + d.decode(out.stderr) };
}

interface Help {
  /** The command path the help is for (`db push`), from its USAGE line. */
  path: string;
  /** A group of commands (`supabase db <subcommand>`): a word after it must be one of them. */
  group: boolean;
  flags: Set<string>;
}

// Promises, so that checks asking at the same time share one run of the CLI.
const helpCache = new Map<string, Promise<Help>>();
function help(path: string[]): Promise<Help> {
  const key = path.join(" ");
  let cached = helpCache.get(key);
  if (!cached) {
    cached = readHelp(path);
    helpCache.set(key, cached);
  }
  return cached;
}

// The pinned CLI's answers to --help, kept between runs under node_modules/.cache (a new version, a new
// folder): each costs about a second of CPU, on cores the suite's lanes share.
const CLI_VERSION = JSON.parse(
  await Deno.readTextFile(new URL("node_modules/supabase/package.json", ROOT)),
).version as string;
const HELP_CACHE = new URL(`node_modules/.cache/supabase-cli-help/${CLI_VERSION}/`, ROOT);

async function helpText(path: string[]): Promise<string> {
  const file = new URL(`${path.join("_").replace(/[^\w-]/g, "-") || "_root"}.txt`, HELP_CACHE);
  try {
    return await Deno.readTextFile(file);
  } catch {
    const { code, text } = await run([...path, "--help"]);
    if (code === 0) {
      await Deno.mkdir(HELP_CACHE, { recursive: true });
      // Whole or not at all: a run stopped mid-write leaves no half answer for the next one.
      const partial = new URL(`${file.pathname}.${crypto.randomUUID()}`, "file://");
      await Deno.writeTextFile(partial, text);
      await Deno.rename(partial, file);
    }
    return text;
  }
}

async function readHelp(path: string[]): Promise<Help> {
  const text = await helpText(path);
  const usage = text.match(/USAGE\s*\n\s*supabase\s+(.*)/)?.[1] ?? "";
  const flags = new Set<string>();
  for (const m of text.matchAll(/^\s+(-{1,2}[a-z][\w-]*)(?:,\s*(-{1,2}[a-z][\w-]*))?/gm)) {
    flags.add(m[1]!);
    if (m[2]) flags.add(m[2]);
  }
  return {
    path: usage.split(/\s+/).filter((w) => /^[a-z][\w-]*$/.test(w)).join(" "),
    group: usage.includes("<subcommand>"),
    flags,
  };
}

/** What is wrong with one command on the pinned CLI: an unknown (sub)command or flag; [] when none. */
export async function problems(cmd: CliCommand): Promise<string[]> {
  const words = cmd.args.filter((a) => !a.startsWith("-"));
  // One question: the CLI answers --help for the longest leading run of words it knows as a command
  // (its USAGE line names it); the rest are that command's arguments.
  const h = await help(words);
  const known = h.path.split(" ").filter(Boolean);
  let found: Help | undefined = known.length > 0 && known.every((w, i) => w === words[i]) ? h : undefined;
  const length = known.length;
  if (found?.group && length < words.length) found = undefined; // `db shove`: no such subcommand of db
  if (!found) return [`${cmd.file}:${cmd.line}: no such command: supabase ${words.join(" ")}`];
  const bad = cmd.args.filter((a) => a.startsWith("-")).map((a) => a.split("=")[0]!)
    .filter((flag) => !found!.flags.has(flag));
  return bad.map((flag) => `${cmd.file}:${cmd.line}: supabase ${found!.path} has no flag ${flag}`);
}

Deno.test("the checker refuses what the pinned CLI does not have", async () => {
  const cmds = cliCommands(
    "example.md",
    "```sh\nnpx supabase db push --remote   # once in the README\nsupabase db shove\nSECRET=x npx supabase functions deploy --use-api webhooks\n```\n",
  );
  assertEquals(cmds.map((c) => c.args), [["db", "push", "--remote"], ["db", "shove"], [
    "functions",
    "deploy",
    "--use-api",
    "webhooks",
  ]]);
  const [remote, shove, deploy] = await Promise.all(cmds.map(problems));
  assertEquals(remote, ["example.md:2: supabase db push has no flag --remote"]);
  assertEquals(shove!.length, 1, "an unknown subcommand");
  assertEquals(deploy, [], "arguments after the command are not commands");
});

Deno.test("every supabase command in the guides exists on the pinned CLI, with every flag it uses", async () => {
  const commands: CliCommand[] = [];
  for (const file of await documentationFiles()) {
    commands.push(...cliCommands(file, await Deno.readTextFile(new URL(file, ROOT))));
  }
  const deploy = commands.filter((c) => c.file === "docs/operations.md");
  assert(deploy.length >= 8, `docs/operations.md shows ${deploy.length} supabase commands`);
  for (const path of ["db push", "config push", "functions deploy", "secrets set", "link"]) {
    assert(deploy.some((c) => c.args.join(" ").startsWith(path)), `the deploy steps run supabase ${path}`);
  }
  const found = (await Promise.all(commands.map(problems))).flat();
  assertEquals(found, []);
});

Deno.test("the deploy steps' db push runs --dry-run on a database with supabase/config.toml as it is", async () => {
  const pushes = cliCommands(
    "docs/operations.md",
    await Deno.readTextFile(new URL("docs/operations.md", ROOT)),
  )
    .filter((c) => c.args[0] === "db" && c.args[1] === "push");
  assert(pushes.length > 0, "docs/operations.md pushes the migrations");
  for (const push of pushes) {
    // The same flags, aimed at the test database instead of the linked project.
    const flags = push.args.slice(2).filter((a) => !/^--(linked|project-ref|password|dry-run)\b/.test(a));
    const { code, text } = await run(["db", "push", ...flags, "--db-url", testDbUrl(), "--dry-run"], {
      PGSSLMODE: "disable", // the test cluster has no TLS
    });
    assertEquals(code, 0, `${push.text}:\n${text}`);
    assert(/DRY RUN/.test(text) && /up to date|Would push/.test(text), text);
  }
});

Deno.test("every [remotes.*] setting in a table supabase/config.toml has overrides one of its settings (a typo would be ignored)", async () => {
  const config = parse(await Deno.readTextFile(new URL("supabase/config.toml", ROOT))) as Record<
    string,
    unknown
  >;
  const remotes = config.remotes as Record<string, Record<string, unknown>> | undefined;
  assert(remotes?.production, "supabase/config.toml has [remotes.production]");
  const leaves = (o: Record<string, unknown>, prefix: string[] = []): string[][] =>
    Object.entries(o).flatMap(([k, v]) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? leaves(v as Record<string, unknown>, [...prefix, k])
        : [[...prefix, k]]
    );
  const missing: string[] = [];
  for (const [name, remote] of Object.entries(remotes)) {
    assert(/^[a-z]{20}$/.test(String(remote.project_id)), `remotes.${name}.project_id is a project ref`);
    for (const path of leaves(remote).filter((p) => p[0] !== "project_id")) {
      const at = (keys: string[]) => {
        let node: unknown = config;
        for (const key of keys) node = (node as Record<string, unknown> | undefined)?.[key];
        return node;
      };
      // A table only the hosted project has ([auth.email.smtp]: Auth's SMTP server) overrides nothing;
      // its keys are held by tests/config_push_test.ts's list of what config push writes.
      if (at(path.slice(0, -1)) === undefined) continue;
      if (at(path) === undefined) missing.push(`remotes.${name}.${path.join(".")}`);
    }
  }
  assertEquals(missing, []);
});

/**
 * The deploy steps in the order a reader runs them: the lines of docs/operations.md's deploy block, or
 * the commands (code spans) of the README's Deploy section, which sums the block up.
 */
export function deploySteps(file: string, markdown: string): string[] {
  if (file === "README.md") {
    const start = markdown.indexOf("\n## Deploy\n");
    assert(start >= 0, "README.md has a Deploy section");
    const end = markdown.indexOf("\n## ", start + 1);
    const section = markdown.slice(start, end < 0 ? undefined : end);
    return [...section.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s+/g, " ").trim())
      .filter((code) => /^(npm|npx|export) /.test(code)); // not the file and setting names around them
  }
  return markedBlock(markdown, "deploy").replace(/\\\n\s*/g, " ").split("\n").map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
}

/** What must come before what in a deploy, and why (the migrations' and the CLI's needs). */
const DEPLOY_ORDER: [RegExp, RegExp, string][] = [
  [/^npm ci\b/, /^npx supabase /, "npx runs the CLI npm ci pinned; without it, the newest"],
  [/^npx supabase login\b/, /^npx supabase link\b/, "link asks the Management API, which needs the login"],
  [/^npx supabase link\b/, /^npx supabase (secrets|db|config|functions)\b/, "link names the project"],
  [/^npx supabase secrets set\b/, /^npx supabase db push\b/, "the dispatch secret goes to both"],
  [/^npx supabase db push\b/, /^npx supabase config push\b/, "the access-token hook is a migration's"],
  [/^npx supabase db push\b/, /^npx supabase functions deploy\b/, "functions check edge_user's login"],
  [/^npx supabase db push\b/, /^npm run platform:superadmin\b/, "platform_user_flags is a migration's"],
  [/^export .*\bSUPABASE_DB_URL=/, /^npm run platform:superadmin\b/, "else it writes to the local database"],
];

Deno.test("the deploy steps of the README and docs/operations.md run in the order the migrations and the CLI need", async () => {
  const toml = await Deno.readTextFile(new URL("supabase/config.toml", ROOT));
  const vault = toml.slice(toml.indexOf("[db.vault]"), toml.indexOf("\n[", toml.indexOf("[db.vault]") + 1));
  const variables = [...toml.matchAll(/"env\(([A-Z_][A-Z0-9_]*)\)"/g)].map((m) => m[1]!);
  const rules = [...DEPLOY_ORDER];
  // Every env(...) the CLI reads: [db.vault]'s at db push, [remotes.production]'s at config diff and push.
  for (const name of variables) {
    const reader = vault.includes(`env(${name})`)
      ? /^npx supabase db push\b/
      : /^npx supabase config (diff|push)\b/;
    rules.push([new RegExp(`^export .*\\b${name}=`), reader, `${name} is read from the environment there`]);
  }
  const wrong: string[] = [];
  for (const file of ["README.md", "docs/operations.md"]) {
    const steps = deploySteps(file, await Deno.readTextFile(new URL(file, ROOT)));
    if (!/^npm ci\b/.test(steps[0] ?? "")) wrong.push(`${file}: starts with ${steps[0]}, not npm ci`);
    for (const [before, after, why] of rules) {
      const first = steps.findIndex((s) => before.test(s));
      const afters = steps.flatMap((s, i) => after.test(s) ? [i] : []);
      if (first < 0 || afters.length === 0) wrong.push(`${file}: lacks ${first < 0 ? before : after}`);
      else if (afters.some((i) => i < first)) wrong.push(`${file}: ${after} before ${before} (${why})`);
    }
  }
  assertEquals(wrong, []);
});

Deno.test("the README's deploy commands exist on the pinned CLI, with every flag they use", async () => {
  const steps = deploySteps("README.md", await Deno.readTextFile(new URL("README.md", ROOT)));
  const commands = steps.filter((s) => /^npx supabase /.test(s)).flatMap((s) =>
    cliCommands("README.md", `\`\`\`sh\n${s}\n\`\`\`\n`)
  );
  for (const path of ["login", "link", "secrets set", "db push", "config push", "functions deploy"]) {
    assert(
      commands.some((c) => c.args.join(" ").startsWith(path)),
      `the README's deploy runs supabase ${path}`,
    );
  }
  assertEquals((await Promise.all(commands.map(problems))).flat(), []);
});
