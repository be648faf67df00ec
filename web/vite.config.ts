// The settings area is a static site. Its only configuration is where Supabase is (VITE_SUPABASE_URL)
// and the project's public anon key (VITE_SUPABASE_ANON_KEY), both baked in at build time. Its security
// headers (security_headers.ts) come with it: in the dev server, and as web/dist/_headers.
import { defineConfig, loadEnv } from "vite";
import react from "@vitejs/plugin-react";
import { securityHeadersPlugin } from "./security_headers.ts";

export default defineConfig(({ command, mode }) => {
  const env = loadEnv(mode, ".", "VITE_");
  // The dev server's inline scripts and styles (hot reload) carry this nonce; one per dev-server process.
  // The build has no inline script or style, so it needs none.
  const nonce = btoa(
    String.fromCharCode(...crypto.getRandomValues(new Uint8Array(18))),
  );
  return {
    plugins: [react(), securityHeadersPlugin(env, nonce)],
    html: command === "serve" ? { cspNonce: nonce } : {},
    server: { host: "127.0.0.1", strictPort: true },
    preview: { host: "127.0.0.1", strictPort: true },
    build: { sourcemap: false, target: "es2022" },
  };
});
