// The documentation keeps the shape its readers rely on: guides short enough to read (none over 400
// lines, the README under 200), BENCHMARKS.md and RELIABILITY.md each under 12 KB and opening with one
// summary table whose every row names the command that measures it and the commit it was measured at
// (the series and narratives behind them live in docs/benchmarks/ and docs/reliability/), and the
// suite's duration said in one place (the suite's own summary, and the benchmark row), not repeated in
// the guides where it goes stale: three different durations of one suite once stood in three files.
import { assert, assertEquals } from "./helpers/assert.ts";
import { documentationFiles, longTableCells, ROOT } from "./helpers/markdown.ts";

const read = (path: string) => Deno.readTextFile(new URL(path, ROOT));
const lineCount = (text: string) => text.replace(/\n$/, "").split("\n").length;

Deno.test("no guide in docs/ is over 400 lines, and the README is under 200", async () => {
  const long: string[] = [];
  for (const file of await documentationFiles()) {
    // Guides: docs/*.md and the event pages; the history and detail files under docs/benchmarks/ and
    // docs/reliability/ are records, not guides.
    if (!/^docs\/([^/]+|events\/[^/]+)\.md$/.test(file)) continue;
    const n = lineCount(await read(file));
    if (n > 400) long.push(`${file}: ${n} lines`);
  }
  assertEquals(long, []);
  const readme = lineCount(await read("README.md"));
  assert(readme < 200, `README.md has ${readme} lines`);
});

Deno.test("no table cell of a guide or the README is over 300 characters (longer ones become prose or lists)", async () => {
  const long: string[] = [];
  for (const file of await documentationFiles()) {
    // The same guides as above; the records under docs/benchmarks/ and docs/reliability/ keep their
    // evidence in their tables.
    if (file !== "README.md" && !/^docs\/([^/]+|events\/[^/]+)\.md$/.test(file)) continue;
    for (const cell of longTableCells(await read(file), 300)) {
      long.push(`${file}: a cell of ${cell.length} characters in the row "${cell.row}"`);
    }
  }
  assertEquals(long, []);
});

Deno.test("a long cell is found in a table, and not in a code block", () => {
  const cell = "x".repeat(301);
  assertEquals(longTableCells(`| a | b |\n|---|---|\n| \`GET /x\` | ${cell} |\n`, 300), [
    { row: "`GET /x`", length: 301 },
  ]);
  assertEquals(longTableCells("```\n| a | b |\n|---|---|\n| c | " + cell + " |\n```\n", 300), []);
  assertEquals(longTableCells(`| a | b |\n|---|---|\n| c | ${"x".repeat(300)} |\n`, 300), []);
});

/** The rows of the first Markdown table after `## Summary`, as cells by column name. */
export function summaryRows(markdown: string): Record<string, string>[] {
  const at = markdown.indexOf("\n## Summary\n");
  assert(at >= 0, "a ## Summary section");
  const lines = markdown.slice(at).split("\n");
  const start = lines.findIndex((l) => l.startsWith("|"));
  const table: string[] = [];
  for (const l of lines.slice(start)) {
    if (!l.startsWith("|")) break;
    table.push(l);
  }
  const cells = (l: string) => l.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
  const header = cells(table[0]!);
  return table.slice(2).map((l) => Object.fromEntries(cells(l).map((c, i) => [header[i]!, c])));
}

for (const file of ["BENCHMARKS.md", "RELIABILITY.md"]) {
  Deno.test(`${file} is under 12 KB and opens with a summary whose every row names its command and commit`, async () => {
    const text = await read(file);
    const bytes = new TextEncoder().encode(text).length;
    assert(bytes < 12 * 1024, `${file} is ${bytes} bytes`);
    const summaryLine = lineCount(text.slice(0, text.indexOf("\n## Summary\n") + 1));
    assert(summaryLine <= 20, `the summary starts on line ${summaryLine}: it belongs in the first screen`);
    const rows = summaryRows(text);
    assert(rows.length >= 8, `${rows.length} rows`);
    const bad = rows.filter((r) =>
      !/`[^`]*(bash|deno|npm|node|pg_virtualenv)[^`]*`/.test(r.command ?? "") ||
      !/^`[0-9a-f]{7,40}`$/.test(r.commit ?? "") || !/^\d{4}-\d\d-\d\d$/.test(r.date ?? "") ||
      !(r.machine ?? "").trim()
    );
    assertEquals(bad, [], "each row: a command, the machine, a date and a commit");
  });
}

Deno.test("the summary parser reads cells by column, empty ones included", () => {
  const rows = summaryRows(
    "# X\n\n## Summary\n\n| figure | goal | command | commit |\n|---|---|---|---|\n| a | | `bash x` | `abc1234` |\n\nAfter.\n",
  );
  assertEquals(rows, [{ figure: "a", goal: "", command: "`bash x`", commit: "`abc1234`" }]);
});

/**
 * Sentences that state how long the whole suite takes: a duration in a sentence about `npm test`,
 * `scripts/test.sh` or a full run, or in any sentence of a section about running the tests.
 */
export function suiteDurations(markdown: string): string[] {
  const duration =
    /\b\d+(?:[.,]\d+)?\s*(?:min(?:utes?)?|s|seconds)\b|\b(?:one|two|three|four|five|six|ten) minutes?\b|\b\d+ min \d+ s\b/i;
  const subject = /npm test|scripts\/test\.sh|\.ci\/run|\bthe (?:whole|full) (?:suite|run)\b|\bfull runs?\b/i;
  const found: string[] = [];
  // Prose only (a summary table's row is the one place a run's figures belong), section by section.
  let fence = false;
  const text = markdown.split("\n").filter((l) => {
    if (/^\s*(```|~~~)/.test(l)) fence = !fence;
    return !fence && !/^\s*(```|~~~)/.test(l) && !l.startsWith("|");
  }).join("\n");
  for (const section of text.split(/\n(?=#{1,6} )/)) {
    const aboutTests = /^#{1,6} .*\b(?:tests|run every test)\b/i.test(section);
    for (const sentence of section.replace(/\n(?!\n)/g, " ").split(/(?<=[.!?)])\s+/)) {
      if ((aboutTests || subject.test(sentence)) && duration.test(sentence)) found.push(sentence.trim());
    }
  }
  return found;
}

Deno.test("the duration check finds the three durations that once disagreed", () => {
  const before = [
    "## Tests\n\nRuns never share state. About three minutes on this 2-core machine when it is otherwise quiet.\n",
    "The suites run with the rest of the tests (`bash scripts/test.sh`, default sizes, about 1 minute of its roughly 1.5) and on their own.\n",
    "The latest full run, `CI=true bash .ci/run` on a fresh clone: **898 passed, 0 failed**, 7 min 6 s.\n",
  ];
  for (const text of before) assertEquals(suiteDurations(text).length, 1, text);
  assertEquals(
    suiteDurations("## Tests\n\nEach run has its own cluster.\n\n## Retries\n\nAfter 10 s.\n"),
    [],
  );
});

Deno.test("no guide states how long the whole suite takes (the summary and BENCHMARKS.md do)", async () => {
  const stated: string[] = [];
  for (const file of await documentationFiles()) {
    if (
      file === "BENCHMARKS.md" || file.startsWith("docs/benchmarks/") || file.startsWith("docs/reliability/")
    ) {
      continue;
    }
    for (const sentence of suiteDurations(await read(file))) {
      stated.push(`${file}: ${sentence.slice(0, 160)}`);
    }
  }
  assertEquals(stated, []);
});

/** Lines that name a work-tracking number (the word and a number): a reader cannot look it up; say what and when. */
export function workItemNumbers(text: string): string[] {
  return text.split("\n").filter((l) => /\bissues? #?\d+/i.test(l)).map((l) => l.trim());
}

Deno.test("no document or test names a work-tracking number (what was done, measured or fixed, and when, instead)", async () => {
  assertEquals(
    workItemNumbers(`a\n// the recovered deliveries (${"issue"} 37, item 5)\nb ${"Issue"} #35 measured\n`),
    [
      `// the recovered deliveries (${"issue"} 37, item 5)`,
      `b ${"Issue"} #35 measured`,
    ],
  );
  assertEquals(workItemNumbers("no issues found; 37 issues of a kind"), []);
  const files = [...await documentationFiles()];
  for (const dir of ["tests/", "web/tests/", "supabase/tests/"]) {
    const walk = async (d: string) => {
      for await (const e of Deno.readDir(new URL(d, ROOT))) {
        if (e.isDirectory && e.name !== "artifacts") await walk(`${d}${e.name}/`);
        else if (/\.(ts|sql)$/.test(e.name)) files.push(`${d}${e.name}`);
      }
    };
    await walk(dir);
  }
  const found: string[] = [];
  for (const file of files) {
    for (const line of workItemNumbers(await read(file))) found.push(`${file}: ${line.slice(0, 140)}`);
  }
  assertEquals(found, []);
});

/**
 * Sentences of a guide that state the settings app's size (a figure in kB other than its 100 kB budget):
 * it changes with every page added, and BENCHMARKS.md's row is where it is measured ("about 65 kB" stood
 * in two guides while the benchmark said 80.9 kB).
 */
export function appSizes(markdown: string): string[] {
  return markdown.replace(/\n(?!\n)/g, " ").split(/(?<=[.!?)])\s+/)
    .filter((s) => [...s.matchAll(/\b(\d+(?:\.\d+)?)\s*kB\b/g)].some((m) => m[1] !== "100"));
}

Deno.test("no guide states the settings app's size (BENCHMARKS.md's row does)", async () => {
  assertEquals(appSizes("The app: about 65 kB gzipped in all. A test fails past 100 kB gzipped.").length, 1);
  const stated: string[] = [];
  for (const file of await documentationFiles()) {
    if (file !== "README.md" && !/^docs\/([^/]+|events\/[^/]+)\.md$/.test(file)) continue;
    for (const sentence of appSizes(await read(file))) stated.push(`${file}: ${sentence.slice(0, 160)}`);
  }
  assertEquals(stated, []);
});

/** A summary row's command that runs the whole suite (not a selection of its files). */
const WHOLE_SUITE = /^`(?:time )?(?:CI=true )?(?:bash \.ci\/run|npm test|bash scripts\/test\.sh)`$/;

Deno.test("the whole suite's count stands in BENCHMARKS.md's row alone (RELIABILITY.md once said 898 where it said 2,914)", async () => {
  const rows = summaryRows(await read("RELIABILITY.md"));
  const whole = rows.filter((r) => WHOLE_SUITE.test((r.command ?? "").trim()));
  assertEquals(
    whole.map((r) => r.what),
    [],
    "RELIABILITY.md: a row for the whole suite (BENCHMARKS.md has it)",
  );
  const bench = summaryRows(await read("BENCHMARKS.md")).filter((r) =>
    /`[^`]*npm test`/.test(r.command ?? "")
  );
  assertEquals(bench.length, 1, "BENCHMARKS.md: one row for `npm test`");
});
