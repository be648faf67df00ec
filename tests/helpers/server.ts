// Serves a function's app (or any fetch handler) on a random loopback port for a test.
export interface TestServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export function serve(handler: (req: Request) => Response | Promise<Response>): Promise<TestServer> {
  return new Promise((resolve) => {
    const controller = new AbortController();
    const server = Deno.serve(
      {
        hostname: "127.0.0.1",
        port: 0,
        signal: controller.signal,
        onListen: ({ port }) =>
          resolve({
            url: `http://127.0.0.1:${port}`,
            port,
            close: async () => {
              controller.abort();
              await server.finished;
            },
          }),
      },
      handler,
    );
  });
}

/** Serves a function app the way Supabase routes it: `${url}/functions/v1/<name>/...`. */
export async function serveFunction(
  name: string,
  app: { fetch: (req: Request) => Response | Promise<Response> },
): Promise<TestServer & { base: string }> {
  const prefix = "/functions/v1";
  const server = await serve((req) => {
    const url = new URL(req.url);
    if (!url.pathname.startsWith(`${prefix}/${name}`)) {
      return new Response("no such function", { status: 404 });
    }
    url.pathname = url.pathname.slice(prefix.length);
    return app.fetch(new Request(url, req));
  });
  return { ...server, base: `${server.url}${prefix}/${name}` };
}

/** A loopback port nothing listens on right now, for a child process that must be told its port. */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}
