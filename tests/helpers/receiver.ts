// A tiny HTTP receiver on loopback that records every request it gets and answers as told.
import { serve, type TestServer } from "./server.ts";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Headers;
  body: Uint8Array;
  text: string;
  receivedAt: number;
}

export type Responder = (req: ReceivedRequest, index: number) => Response | Promise<Response>;

export interface Receiver extends TestServer {
  requests: ReceivedRequest[];
  /** Changes how later requests are answered. */
  respond(fn: Responder): void;
  /** Resolves once `count` requests have arrived, or rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
}

export async function startReceiver(responder: Responder = () => new Response("ok")): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let current = responder;
  const server = await serve(async (req) => {
    const body = new Uint8Array(await req.arrayBuffer());
    const received: ReceivedRequest = {
      method: req.method,
      path: new URL(req.url).pathname,
      headers: req.headers,
      body,
      text: new TextDecoder().decode(body),
      receivedAt: Date.now(),
    };
    const index = requests.push(received) - 1;
    for (const w of waiters.filter((w) => requests.length >= w.count)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    return await current(received, index);
  });
  return {
    ...server,
    requests,
    respond(fn) {
      current = fn;
    },
    waitFor(count, timeoutMs = 5000) {
      if (requests.length >= count) return Promise.resolve(requests);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${requests.length} of ${count} requests in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(requests);
          },
        });
      });
    },
  };
}
