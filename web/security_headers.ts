// Security headers of the settings UI, stated once for both places it is served from:
// - the production build: `_headers` in web/dist, the headers file Netlify and Cloudflare Pages apply
//   to every path, plus the same Content-Security-Policy as a <meta> for hosts that set no headers
//   (GitHub Pages, a bare bucket), where frame-ancestors cannot be had;
// - the Vite dev server (npm run dev), which needs a nonce for the inline scripts and styles its hot
//   reload injects and a WebSocket back to itself.
// The session lives in localStorage (supabase-js, as the specification requires), so the policy allows
// scripts only from the site itself (no inline script, no eval) and connections only to the Supabase
// project, and no page may frame the site (its delete and revoke buttons cannot be clickjacked).
import type { Plugin } from "vite";

const HEADERS_FILE = "_headers";

/** The Content-Security-Policy for a site whose API (auth and functions) lives at `apiOrigin`. */
export function contentSecurityPolicy(
  apiOrigin: string,
  dev?: { nonce: string; socketOrigin: string },
): string {
  const own = dev ? ["'self'", `'nonce-${dev.nonce}'`] : ["'self'"];
  const hmr = dev ? [dev.socketOrigin] : [];
  return [
    "default-src 'none'",
    `script-src ${own.join(" ")}`,
    `style-src ${own.join(" ")}`,
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${[apiOrigin, ...hmr].join(" ")}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "object-src 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Every header the site is served with. */
export function securityHeaders(csp: string): Record<string, string> {
  return {
    "Content-Security-Policy": csp,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    // Nothing of a page's URL (an invitation link's path, say) goes to other sites.
    "Referrer-Policy": "no-referrer",
  };
}

/** `_headers` in the format Netlify and Cloudflare Pages read: a path pattern, then its headers. */
export function headersFile(headers: Record<string, string>): string {
  return `/*\n${Object.entries(headers).map(([k, v]) => `  ${k}: ${v}\n`).join("")}`;
}

/**
 * The origin of VITE_SUPABASE_URL (auth at /auth/v1 and functions at /functions/v1 live under it); a
 * build without it (the app then says it is not configured) connects nowhere.
 */
export function apiOriginOf(supabaseUrl: string | undefined): string {
  if (!supabaseUrl) return "'none'";
  try {
    return new URL(supabaseUrl).origin;
  } catch {
    throw new Error(
      `VITE_SUPABASE_URL is not a URL: ${JSON.stringify(supabaseUrl)}`,
    );
  }
}

/** The dev server's own WebSocket origin (hot reload), from a Host header that is a plain host:port. */
function devSocketOrigin(host: string | undefined): string {
  return /^[A-Za-z0-9.:[\]-]+$/.test(host ?? "") ? `ws://${host}` : "'self'";
}

export function securityHeadersPlugin(
  env: { VITE_SUPABASE_URL?: string },
  devNonce: string,
): Plugin {
  let built = "";
  return {
    name: "settings-security-headers",
    configResolved(config) {
      if (config.command === "build") {
        built = contentSecurityPolicy(apiOriginOf(env.VITE_SUPABASE_URL));
      }
    },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const csp = contentSecurityPolicy(apiOriginOf(env.VITE_SUPABASE_URL), {
          nonce: devNonce,
          socketOrigin: devSocketOrigin(
            (req as { headers?: { host?: string } }).headers?.host,
          ),
        });
        for (const [k, v] of Object.entries(securityHeaders(csp))) {
          res.setHeader(k, v);
        }
        next();
      });
    },
    transformIndexHtml: {
      order: "post",
      handler: (_html, ctx) =>
        ctx.server ? [] : [{
          tag: "meta",
          attrs: {
            "http-equiv": "Content-Security-Policy",
            content: built.replace(/; frame-ancestors [^;]+/, ""),
          },
          injectTo: "head-prepend",
        }],
    },
    generateBundle() {
      this.emitFile({
        type: "asset",
        fileName: HEADERS_FILE,
        source: headersFile(securityHeaders(built)),
      });
    },
  };
}
