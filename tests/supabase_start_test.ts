// `supabase start` and `supabase functions serve` (docs/getting-started.md#with-docker) with the pinned
// CLI and this repository's supabase/ folder: there is no Docker here, so each must get past reading
// supabase/config.toml (every table and key it knows, the templates it names, the [functions.*] blocks
// and their import map) and stop only where it needs the Docker daemon. A config.toml the CLI cannot
// read stops it earlier with "failed to read config", which the control case shows is told apart.
// Each run has its own HOME and a copy of supabase/ as its workdir, and a DOCKER_HOST that answers
// nothing, so it never reaches a daemon or writes into the repository.
import { assert, assertMatch } from "./helpers/assert.ts";
import { ROOT } from "./helpers/markdown.ts";
import { CLI_OFFLINE_ENV, SUPABASE_CLI } from "./helpers/supabase_cli.ts";

/** A workdir holding a copy of supabase/ (without .temp) and import_map.json; `edit` changes config.toml. */
async function workdir(edit: (config: string) => string = (c) => c): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "supabase-start-" });
  const copy = async (from: string, to: string) => {
    for await (const e of Deno.readDir(from)) {
      if (e.name === ".temp" || e.name === ".branches") continue;
      if (e.isDirectory) {
        await Deno.mkdir(`${to}/${e.name}`);
        await copy(`${from}/${e.name}`, `${to}/${e.name}`);
      } else if (e.isFile) await Deno.copyFile(`${from}/${e.name}`, `${to}/${e.name}`);
    }
  };
  await Deno.mkdir(`${dir}/supabase`);
  await copy(new URL("supabase", ROOT).pathname, `${dir}/supabase`);
  await Deno.copyFile(new URL("import_map.json", ROOT).pathname, `${dir}/import_map.json`);
  const config = `${dir}/supabase/config.toml`;
  await Deno.writeTextFile(config, edit(await Deno.readTextFile(config)));
  return dir;
}

async function cli(dir: string, ...args: string[]): Promise<{ code: number; text: string }> {
  await Deno.mkdir(`${dir}/home`, { recursive: true });
  const out = await new Deno.Command(SUPABASE_CLI, {
    args: [...args, "--workdir", dir],
    cwd: dir,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: `${dir}/home`,
      DOCKER_HOST: `unix://${dir}/no-docker.sock`,
      ...CLI_OFFLINE_ENV,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, text: d.decode(out.stdout) + d.decode(out.stderr) };
}

const NEEDS_DOCKER = /Cannot connect to the Docker daemon at unix:\/\/.*no-docker\.sock/;
const CONFIG_ERROR =
  /failed to read config|failed to load config|invalid config|Invalid|CliConfigParseError/i;

Deno.test({
  name: "supabase start and functions serve read supabase/config.toml and stop only for want of Docker",
  sanitizeResources: false,
  fn: async () => {
    const dir = await workdir();
    try {
      for (const command of [["start"], ["functions", "serve"]]) {
        const { code, text } = await cli(dir, ...command);
        assert(
          code !== 0 || NEEDS_DOCKER.test(text),
          `supabase ${command.join(" ")} without Docker: ${text}`,
        );
        assert(!CONFIG_ERROR.test(text), `supabase ${command.join(" ")} found a config error:\n${text}`);
        assertMatch(text, NEEDS_DOCKER, `supabase ${command.join(" ")} got as far as Docker`);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("the check tells a config.toml the CLI cannot read from one that only lacks Docker", async () => {
  const dir = await workdir((c) => c.replace(/^jwt_expiry = 3600$/m, 'jwt_expiry = "one hour"'));
  try {
    const { code, text } = await cli(dir, "start");
    assert(code !== 0, text);
    assertMatch(text, /failed to read config/);
    assert(!NEEDS_DOCKER.test(text), text);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
