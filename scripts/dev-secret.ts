// The HS256 secret the local dev server verifies tokens with: JWT_SECRET when set, otherwise one made
// at random on first use and kept in supabase/.temp (ignored by git), so nothing secret is committed.
const FILE = new URL("../supabase/.temp/dev-jwt-secret", import.meta.url);

export async function devJwtSecret(): Promise<string> {
  const fromEnv = Deno.env.get("JWT_SECRET");
  if (fromEnv) return fromEnv;
  try {
    return (await Deno.readTextFile(FILE)).trim();
  } catch {
    const secret = Array.from(
      crypto.getRandomValues(new Uint8Array(32)),
      (b) => b.toString(16).padStart(2, "0"),
    ).join("");
    await Deno.mkdir(new URL(".", FILE), { recursive: true });
    await Deno.writeTextFile(FILE, secret + "\n", { mode: 0o600 });
    return secret;
  }
}
