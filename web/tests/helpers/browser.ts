// What the browser tests need around the settings UI: a production build pointed at a stack and its size,
// a static host for it (with the fallback every static host offers), Debian's Chromium through
// playwright-core, screenshots and an axe-core accessibility check.
import { gzipSync } from "node:zlib";
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import axe from "axe-core";

const webDir = new URL("../../", import.meta.url).pathname;
export const artifactsDir = `${webDir}tests/artifacts`;
const SCREENSHOTS = Deno.env.get("WEB_SCREENSHOTS") === "1";
const docsImagesDir = new URL("../../../docs/images/", import.meta.url).pathname;

/**
 * With WEB_DOCS_IMAGES=1, a screenshot of the page or of one element of it for the guides, as
 * docs/images/<name>.png (test artifacts are not kept; these are committed). Otherwise nothing.
 */
export async function docsImage(
  what: Page | Locator,
  name: string,
): Promise<void> {
  if (Deno.env.get("WEB_DOCS_IMAGES") !== "1") return;
  await what.screenshot({
    path: `${docsImagesDir}${name}.png`,
    animations: "disabled",
    scale: "css",
  });
}

// What a build is pointed at, while it is built: the real stack's URL and key replace these in the
// built files (buildWeb). Its own origin, so the CSP in _headers carries it whole.
const PLACEHOLDER_URL = "http://settings-web-under-test.invalid:9";
const PLACEHOLDER_KEY = "settings-web-under-test-anon-key";
// The built files that may carry them; the rest (images, fonts) are copied as they are.
const TEXT_FILE = /\.(js|mjs|css|html|json|map|txt|webmanifest)$|^_headers$/;

/** SHA-256 of every file `vite build` reads (web/ without its tests and packages, the lockfile included). */
async function sourcesHash(options: string): Promise<string> {
  const parts: string[] = [options];
  const walk = async (dir: string) => {
    const entries = [];
    for await (const e of Deno.readDir(dir)) entries.push(e);
    entries.sort((a, b) => a.name < b.name ? -1 : 1);
    for (const e of entries) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) {
        if (
          dir === webDir.slice(0, -1) &&
          ["node_modules", "tests", "dist"].includes(e.name)
        ) continue;
        await walk(path);
      } else if (e.isFile) {
        const digest = await crypto.subtle.digest(
          "SHA-256",
          await Deno.readFile(path),
        );
        parts.push(
          `${path.slice(webDir.length)} ${[...new Uint8Array(digest)].join(",")}`,
        );
      }
    }
  };
  await walk(webDir.slice(0, -1));
  const all = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(parts.join("\n")),
  );
  return [...new Uint8Array(all)].map((b) => b.toString(16).padStart(2, "0"))
    .join("").slice(0, 24);
}

/** `vite build` of web/ pointed at the placeholders, into `outDir`. */
async function viteBuild(
  outDir: string,
  args: string[],
  debug: boolean,
): Promise<void> {
  const out = await new Deno.Command("node", {
    args: [
      `${webDir}node_modules/vite/bin/vite.js`,
      "build",
      "--outDir",
      outDir,
      "--emptyOutDir",
      "--logLevel",
      "warn",
      ...(debug ? ["--mode", "development"] : []),
      ...args,
    ],
    cwd: webDir,
    env: {
      VITE_SUPABASE_URL: PLACEHOLDER_URL,
      VITE_SUPABASE_ANON_KEY: PLACEHOLDER_KEY,
      NODE_ENV: debug ? "development" : "production",
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `vite build failed:\n${new TextDecoder().decode(out.stdout)}${new TextDecoder().decode(out.stderr)}`,
    );
  }
}

/**
 * `vite build` of web/ for this stack, into a temporary directory. `debug`: a development build, with
 * preact/debug checking every render and saying what is wrong in the console. `args`: more vite options.
 *
 * One build per version of the sources and options, kept in web/node_modules/.cache/test-builds: the
 * production build made once with placeholders for the stack's URL and anon key, which each call's copy
 * then carries instead (a build cost ~10 s of CPU, and every browser file made its own).
 */
export async function buildWeb(
  apiUrl: string,
  anonKey: string,
  { args = [], debug = false }: { args?: string[]; debug?: boolean } = {},
): Promise<string> {
  const cacheRoot = `${webDir}node_modules/.cache/test-builds`;
  const built = `${cacheRoot}/${await sourcesHash(
    JSON.stringify({ args, debug }),
  )}`;
  if (!(await exists(`${built}/index.html`))) {
    await Deno.mkdir(cacheRoot, { recursive: true });
    // Built beside it, then renamed into place: a lane reading it never sees half a build, and two
    // lanes building the same version at once each keep a whole one.
    const fresh = await Deno.makeTempDir({
      dir: cacheRoot,
      prefix: "building-",
    });
    await viteBuild(fresh, args, debug);
    await Deno.rename(fresh, built).catch(() => Deno.remove(fresh, { recursive: true }));
  }
  const outDir = await Deno.makeTempDir({ prefix: "settings-web-" });
  const origin = new URL(apiUrl).origin;
  const copy = async (from: string, to: string) => {
    for await (const e of Deno.readDir(from)) {
      if (e.isDirectory) {
        await Deno.mkdir(`${to}/${e.name}`);
        await copy(`${from}/${e.name}`, `${to}/${e.name}`);
      } else if (TEXT_FILE.test(e.name)) {
        const text = await Deno.readTextFile(`${from}/${e.name}`);
        // _headers names the API's origin (connect-src); the app itself gets VITE_SUPABASE_URL as given.
        const url = e.name === "_headers" ? origin : apiUrl;
        await Deno.writeTextFile(
          `${to}/${e.name}`,
          text.replaceAll(PLACEHOLDER_URL, url).replaceAll(
            PLACEHOLDER_KEY,
            anonKey,
          ),
        );
      } else {
        await Deno.copyFile(`${from}/${e.name}`, `${to}/${e.name}`);
      }
    }
  };
  await copy(built, outDir);
  return outDir;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

export const BUNDLE_BUDGET_GZIP = 100 * 1024;

/** A build's JavaScript and CSS in bytes, raw and gzipped at level 9 (as a static host precompresses). */
export async function bundleSize(dir: string) {
  const size = { js: 0, jsGzip: 0, css: 0, cssGzip: 0 };
  for await (const f of Deno.readDir(`${dir}/assets`)) {
    const kind = f.name.endsWith(".js") ? "js" : f.name.endsWith(".css") ? "css" : null;
    if (!kind) continue;
    const bytes = await Deno.readFile(`${dir}/assets/${f.name}`);
    size[kind] += bytes.length;
    size[`${kind}Gzip`] += gzipSync(bytes, { level: 9 }).length;
  }
  return { ...size, gzip: size.jsGzip + size.cssGzip };
}

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript",
  css: "text/css",
  svg: "image/svg+xml",
  png: "image/png",
  json: "application/json",
};

/**
 * The headers a `_headers` file gives every path, read as Netlify and Cloudflare Pages read it (only the
 * `/*` rule: the build writes no other).
 */
export function headersForEveryPath(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  let rule = "";
  for (const line of file.split("\n")) {
    if (!line.trim() || line.trim().startsWith("#")) continue;
    if (!/^\s/.test(line)) rule = line.trim();
    else if (rule === "/*") {
      const at = line.indexOf(":");
      out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    }
  }
  return out;
}

/**
 * A static host on loopback: files from `dir`, and index.html for any other path (the app routes), with
 * the headers of the build's `_headers` file, as the documented hosts apply them. `port`: a port chosen
 * beforehand (the stack's SITE_URL names it, so mail links lead here); any free one by default.
 */
export function serveStatic(
  dir: string,
  port = 0,
): { url: string; close(): Promise<void> } {
  let rules: Record<string, string> = {};
  try {
    rules = headersForEveryPath(Deno.readTextFileSync(`${dir}/_headers`));
  } catch { /* a build without one */ }
  const server = Deno.serve(
    { hostname: "127.0.0.1", port, onListen() {} },
    async (req) => {
      const path = decodeURIComponent(new URL(req.url).pathname);
      const file = path.includes("..") || path.endsWith("/") || path === "/_headers" ? "/index.html" : path;
      for (const candidate of [file, "/index.html"]) {
        try {
          const body = await Deno.readFile(`${dir}${candidate}`);
          const ext = candidate.split(".").pop() ?? "";
          return new Response(body, {
            headers: {
              ...rules,
              "content-type": TYPES[ext] ?? "application/octet-stream",
            },
          });
        } catch { /* try the fallback */ }
      }
      return new Response("not found", { status: 404 });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}

// Callbacks given to page.evaluate run in the page, which has a DOM (Deno's types do not).
interface PageElement {
  tagName: string;
  className: string;
  children: { length: number };
  getBoundingClientRect(): { right: number };
}
declare const document: {
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelectorAll(selector: string): Iterable<PageElement>;
};

/**
 * Debian's Chromium headless shell where installed (`chromium-headless-shell`: the same Chromium without
 * the full browser around it, which Playwright's own headless mode also uses; it cost a quarter less CPU
 * for the same tests), else the full browser. `CHROMIUM_PATH` chooses another.
 */
export const CHROMIUM = Deno.env.get("CHROMIUM_PATH") ?? firstExisting([
  "/usr/lib/chromium/chromium-headless-shell",
  "/usr/bin/chromium",
]);

function firstExisting(paths: string[]): string {
  for (const path of paths) {
    try {
      Deno.statSync(path);
      return path;
    } catch {
      // the next one
    }
  }
  return paths[paths.length - 1]!;
}

const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

async function assertChromium(): Promise<void> {
  try {
    await Deno.stat(CHROMIUM);
  } catch {
    throw new Error(
      `no Chromium at ${CHROMIUM}: apt-get install chromium-headless-shell (.ci/run does), or set CHROMIUM_PATH`,
    );
  }
}

/**
 * Chromium headless. Under the test runner, the lane's one Chromium (TEST_BROWSER_WS, started by
 * web/tests/helpers/browser_server.ts): starting one per file cost ~3 s of CPU each. Every page opens
 * in a new context (openPage), as isolated as a fresh profile (its own storage, cookies and cache), and
 * `close()` of a connected browser closes this file's contexts and leaves the browser to the next file.
 * Otherwise its own Chromium, with a fresh profile (playwright-core makes a temporary one per launch).
 */
export async function launchBrowser(): Promise<Browser> {
  const shared = Deno.env.get("TEST_BROWSER_WS");
  if (shared) return await chromium.connect(shared, { timeout: 30_000 });
  await assertChromium();
  return await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
}

/**
 * One Chromium that test processes connect to (launchBrowser with TEST_BROWSER_WS): prints
 * `browser server <ws endpoint>` once it listens, and closes the browser on SIGTERM or SIGINT.
 */
export async function serveBrowser(): Promise<void> {
  await assertChromium();
  const server = await chromium.launchServer({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    host: "127.0.0.1",
  });
  console.log(`browser server ${server.wsEndpoint()}`);
  const stop = async () => {
    await server.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
}

if (import.meta.main) await serveBrowser();

/**
 * A page as the browser tests use it: 1280x800 (a new context of `browser`, or in `context`), at most 15 s
 * for anything. With `lines`, what it logs goes there as `<type>: <text>`, uncaught errors as
 * `pageerror: <message>`.
 */
export async function openPage(
  from: Browser | BrowserContext,
  lines?: string[],
): Promise<Page> {
  const context = "newContext" in from
    ? await from.newContext({ viewport: { width: 1280, height: 800 } })
    : from;
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on("console", (m) => lines?.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => lines?.push(`pageerror: ${e.message}`));
  return page;
}

/**
 * Logged lines that say something went wrong: a Content Security Policy refusal, any error or warning,
 * except the browser's own line for an HTTP error answer (tests that provoke 4xx expect those).
 */
export const consoleProblems = (lines: string[]): string[] =>
  lines.filter((l) =>
    /Content Security Policy/i.test(l) ||
    (/^(pageerror|error|warning|assert)/.test(l) &&
      !/^error: Failed to load resource: /.test(l))
  );

export const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

export interface A11yViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** axe-core on the page as it is now; returns the serious and critical violations (`everyImpact`: all). */
export async function seriousA11yViolations(
  page: Page,
  everyImpact = false,
): Promise<A11yViolation[]> {
  const loaded = await page.evaluate(() => "axe" in globalThis);
  if (!loaded) {
    await page.evaluate((axe as unknown as { source: string }).source);
  }
  // Only the violations, and only what is reported of them, cross back from the page: the whole result
  // (passes, incomplete and inapplicable rules with their nodes) cost the test process more than the run.
  const violations = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const result = await (globalThis as any).axe.run(document, { resultTypes: ["violations"] });
    return (result.violations as {
      id: string;
      impact: string | null;
      help: string;
      nodes: { target: string[] }[];
    }[]).map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(" ")),
    }));
  });
  return violations.filter((v) => everyImpact || v.impact === "serious" || v.impact === "critical");
}

/** How many pixels the element's content sticks out sideways (0: it does not scroll sideways). */
export async function sidewaysOverflow(box: Locator): Promise<number> {
  const [scroll, width] = await box.evaluate((el) => [el.scrollWidth, el.clientWidth]);
  return Math.max(0, scroll! - width!);
}

/**
 * The query strings of the page's GET requests to a path ending in `pathEnd` (how often a list is asked),
 * from now until `stop()`.
 */
export function watchGets(page: Page, pathEnd: string): { asked: string[]; stop(): void } {
  const asked: string[] = [];
  const onRequest = (r: { url(): string; method(): string }) => {
    const u = new URL(r.url());
    if (r.method() === "GET" && u.pathname.endsWith(pathEnd)) asked.push(u.search);
  };
  page.on("request", onRequest);
  return { asked, stop: () => page.off("request", onRequest) };
}

/**
 * The choices of the visible selects inside `scope` that a select shows cut once chosen: the option's
 * text, in the select's font, wider than the room between its padding and its arrow (a select's
 * scrollWidth never tells). As `<select id>: "text"`. The arrow is taken as 20 px, more than Chromium's:
 * a select sized to its widest choice can be reported cut by a few pixels, so this is for selects given
 * a width (a phone's full-width filters), not for every screen.
 */
export async function cutChoices(page: Page, scope = "body"): Promise<string[]> {
  return await page.evaluate(
    `[...document.querySelectorAll(${JSON.stringify(`${scope} select`)})]
      .filter((select) => select.getClientRects().length > 0)
      .flatMap((select) => {
        const style = getComputedStyle(select);
        const ctx = document.createElement("canvas").getContext("2d");
        ctx.font = style.font;
        const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
        return [...select.options].filter((o) => ctx.measureText(o.text).width > room)
          .map((o) => (select.id || select.name || "select") + ': "' + o.text + '"');
      })`,
  ) as string[];
}

/**
 * At both sizes (desktop and phone): checks that the phone size needs no
 * sideways scrolling of the page, and runs axe at each (serious and critical violations; `everyImpact`:
 * all of them). Returns problems found, in words.
 */
export async function captureAndCheck(
  page: Page,
  name: string,
  { everyImpact = false }: { everyImpact?: boolean } = {},
): Promise<string[]> {
  await Deno.mkdir(artifactsDir, { recursive: true });
  const problems: string[] = [];
  const original = page.viewportSize();
  for (const size of VIEWPORTS) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150);
    const found = problems.length;
    const overflow = await page.evaluate(() => {
      const width = document.documentElement.clientWidth;
      const by = document.documentElement.scrollWidth - width;
      // The innermost elements that stick out, to say what to fix.
      const out = [...document.querySelectorAll("body *")]
        .filter((el) =>
          el.getBoundingClientRect().right > width + 1 &&
          el.children.length === 0
        )
        .slice(0, 3)
        .map((el) => `${el.tagName.toLowerCase()}.${el.className}`);
      return { by, out };
    });
    if (overflow.by > 1) {
      problems.push(
        `${name} at ${size.width}px: the page scrolls sideways by ${overflow.by}px (${
          overflow.out.join(", ")
        })`,
      );
    }
    for (const v of await seriousA11yViolations(page, everyImpact)) {
      problems.push(
        `${name} at ${size.width}px: axe ${v.impact} ${v.id} (${v.help}) at ${v.targets.join(", ")}`,
      );
    }
    // A full-page screenshot costs Chromium more than the checks: taken to show a problem found here,
    // or every time with WEB_SCREENSHOTS=1 (to look at the screens).
    if (problems.length > found || SCREENSHOTS) {
      await page.screenshot({
        path: `${artifactsDir}/${name}-${size.width}x${size.height}.png`,
        fullPage: true,
      });
    }
  }
  if (original) await page.setViewportSize(original);
  return problems;
}

/**
 * The element that has focus: its tag, text, label and id (to check where focus went). Effects that
 * move focus run after the next frame (Preact schedules them so): that frame and the tasks it queued
 * come first.
 */
export async function focused(
  page: Page,
): Promise<{ tag: string; text: string; label: string; id: string }> {
  await page.evaluate(
    `new Promise((done) => requestAnimationFrame(() => setTimeout(() => setTimeout(done))))`,
  );
  return await page.evaluate(`(() => {
    const e = document.activeElement;
    return { tag: e ? e.tagName.toLowerCase() : "", text: ((e && e.textContent) || "").trim(),
             label: (e && e.getAttribute("aria-label")) || "", id: (e && e.id) || "" };
  })()`);
}

/** Signs in on the settings site's sign-in page and waits for the landing page (Webhooks). */
export async function signInAs(
  page: Page,
  siteUrl: string,
  email: string,
  password = "demo-password",
) {
  await page.goto(`${siteUrl}/auth`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/settings\/integrations\/webhooks$/);
}
