// The settings area is a static site. Its only configuration is where Supabase is (VITE_SUPABASE_URL)
// and the project's public anon key (VITE_SUPABASE_ANON_KEY), both baked in at build time.
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  plugins: [react()],
  server: { host: "127.0.0.1", strictPort: true },
  preview: { host: "127.0.0.1", strictPort: true },
  build: { sourcemap: false, target: "es2022" },
});
