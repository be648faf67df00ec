// Build-time configuration: where Supabase is and its public anon key. Nothing secret lives here.
export const SUPABASE_URL: string = (import.meta.env.VITE_SUPABASE_URL ?? "")
  .replace(/\/+$/, "");
export const SUPABASE_ANON_KEY: string = import.meta.env.VITE_SUPABASE_ANON_KEY ?? "";
export const configured = SUPABASE_URL !== "" && SUPABASE_ANON_KEY !== "";
