// Every Markdown file of the documentation must render as its author meant: each fenced code block
// closed, and no fence left in the text. A code block that lost its opening fence once turned the SQL
// of docs/outbound-webhooks.md into a paragraph and everything after it into code, and the link and
// command checks, which read fences line by line, did not notice.
import { assertEquals } from "./helpers/assert.ts";
import { documentationFiles, renderProblems, ROOT } from "./helpers/markdown.ts";

Deno.test("the render check finds a code block that lost a fence, and passes a whole one", () => {
  const whole =
    "# Title\n\n```sql\nselect 1;\n```\n\n- a list\n\n  ```sh\n  echo in a list\n  ```\n\nText.\n";
  assertEquals(renderProblems(whole), []);
  // The opening fence lost: the SQL is a paragraph, the closing fence opens a block that never ends.
  const lost = "Raise it:\n\n-- member.created\ninsert into members values (1);\n```\n\nMore text.\n";
  assertEquals(renderProblems(lost).map((p) => p.line), [5]);
  // A closing fence lost: the block runs to the end of the file.
  assertEquals(renderProblems("Text.\n\n```json\n{}\n\n## A heading\n").map((p) => p.line), [3]);
  // Four backticks close only with four.
  assertEquals(renderProblems("````md\n```\ninner\n```\n````\n"), []);
});

Deno.test("every documentation file renders with every code block closed", async () => {
  const found: string[] = [];
  for (const file of await documentationFiles()) {
    const text = await Deno.readTextFile(new URL(file, ROOT));
    for (const p of renderProblems(text)) found.push(`${file}:${p.line}: ${p.problem}`);
  }
  assertEquals(found, []);
});
