// The Supabase CLI this repository pins, as the tests run it: offline.
import { ROOT } from "./markdown.ts";

export const SUPABASE_CLI = new URL("node_modules/.bin/supabase", ROOT).pathname;

/**
 * The CLI talks to nothing but what a test gives it (a database URL, a stand-in on loopback): no
 * telemetry, and any other HTTP(S) it would send goes to a closed loopback port.
 */
export const CLI_OFFLINE_ENV = {
  SUPABASE_TELEMETRY_DISABLED: "1",
  DO_NOT_TRACK: "1",
  HTTP_PROXY: "http://127.0.0.1:9",
  HTTPS_PROXY: "http://127.0.0.1:9",
  NO_PROXY: "127.0.0.1",
  NO_COLOR: "1",
};
