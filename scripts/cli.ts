// Command-line options of our scripts (dev:user, dev:token, dev:receiver, platform:superadmin,
// dispatch:secret), parsed one way: strict (an unknown or malformed option prints the usage and exits 2,
// changing nothing), and --help prints the usage and exits 0.
import { parseArgs } from "node:util";

export interface Cli {
  /** The option's value, or undefined when it was not given. */
  get(name: string): string | undefined;
  /** Whether a boolean option (a flag) was given. */
  flag(name: string): boolean;
  /** Prints the message and the usage to stderr and exits 2. */
  fail(message: string): never;
}

export function parseCli(
  script: string,
  usage: string,
  stringOptions: string[],
  booleanOptions: string[] = [],
): Cli {
  const fail = (message: string): never => {
    console.error(`${script}: ${message}\n`);
    console.error(usage);
    Deno.exit(2);
  };
  let values: Record<string, string | boolean | undefined> = {};
  try {
    ({ values } = parseArgs({
      args: Deno.args,
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(stringOptions.map((name) => [name, { type: "string" as const }])),
        ...Object.fromEntries(booleanOptions.map((name) => [name, { type: "boolean" as const }])),
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) {
    console.log(usage);
    Deno.exit(0);
  }
  return {
    get: (name) => (typeof values[name] === "string" ? values[name] as string : undefined),
    flag: (name) => values[name] === true,
    fail,
  };
}
