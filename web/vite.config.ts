// The settings area is a static site. Its only configuration is where Supabase is (VITE_SUPABASE_URL)
// and the project's public anon key (VITE_SUPABASE_ANON_KEY), both baked in at build time. Its security
// headers (security_headers.ts) come with it: in the dev server, and as web/dist/_headers.
//
// The code is written against React's API and runs on Preact: the preset compiles JSX for Preact and
// aliases react, react-dom and react/jsx-runtime to preact/compat (for libraries such as TanStack Query
// too). React 19 with react-dom is ~63 kB of the bundle gzipped, Preact with compat ~7 kB; the whole app
// must stay under 100 kB. In development the preset adds preact/debug and hot reload (Prefresh).
import { defineConfig, loadEnv } from "vite";
import preact from "@preact/preset-vite";
import { securityHeadersPlugin } from "./security_headers.ts";

export default defineConfig(({ command, mode }) => {
  const env = loadEnv(mode, ".", "VITE_");
  // The dev server's inline scripts and styles (hot reload) carry this nonce; one per dev-server process.
  // The build has no inline script or style, so it needs none.
  const nonce = btoa(
    String.fromCharCode(...crypto.getRandomValues(new Uint8Array(18))),
  );
  return {
    plugins: [preact(), securityHeadersPlugin(env, nonce)],
    html: command === "serve" ? { cspNonce: nonce } : {},
    server: { host: "127.0.0.1", strictPort: true },
    preview: { host: "127.0.0.1", strictPort: true },
    build: { sourcemap: false, target: "es2022" },
  };
});
