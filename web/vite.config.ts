// The settings area is a static site. Its only configuration is where Supabase is (VITE_SUPABASE_URL)
// and the project's public anon key (VITE_SUPABASE_ANON_KEY), both baked in at build time.
//
// The code is written against React's API and runs on Preact: the preset compiles JSX for Preact and
// aliases react, react-dom and react/jsx-runtime to preact/compat (for libraries such as TanStack Query
// too). React 19 with react-dom is ~63 kB of the bundle gzipped, Preact with compat ~7 kB; the whole app
// must stay under 100 kB. In development the preset adds preact/debug and hot reload (Prefresh).
import { defineConfig } from "vite";
import preact from "@preact/preset-vite";

export default defineConfig({
  plugins: [preact()],
  server: { host: "127.0.0.1", strictPort: true },
  preview: { host: "127.0.0.1", strictPort: true },
  build: { sourcemap: false, target: "es2022" },
});
