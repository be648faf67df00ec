// Build-time configuration: where Supabase is and its public anon key. Nothing secret lives here.
export const SUPABASE_URL: string = (import.meta.env.VITE_SUPABASE_URL ?? "")
  .replace(/\/+$/, "");
export const SUPABASE_ANON_KEY: string = import.meta.env.VITE_SUPABASE_ANON_KEY ?? "";
export const configured = SUPABASE_URL !== "" && SUPABASE_ANON_KEY !== "";
/** Where staff work (the church app), if this build knows it (VITE_CHURCH_APP_URL, https only). */
export const CHURCH_APP_URL: string | null = (() => {
  const raw = (import.meta.env.VITE_CHURCH_APP_URL ?? "").trim();
  try {
    return raw && new URL(raw).protocol === "https:" ? raw : null;
  } catch {
    return null;
  }
})();
