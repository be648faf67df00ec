// The graphile-worker peer of scripts/bench/outbound_vs_peer.sh: webhook delivery the way a
// graphile-worker user would build it, doing the same work as our dispatcher.
//
// - schema.sql: a statement-level AFTER INSERT trigger on public.members stores one event (the same
//   envelope body as ours) and one pending delivery per subscribed endpoint, and enqueues one job per
//   delivery with a single graphile_worker.add_jobs call;
// - the task `deliver_webhook` signs the body with the same headers as ours (hex HMAC-SHA256 and the
//   Standard Webhooks v1 signature), POSTs it over a keep-alive agent with at most PER_ENDPOINT
//   connections per endpoint and a 10 s timeout, and marks the delivery `delivered` (a failure records
//   the attempt and throws, so graphile-worker retries with its backoff).
//
// Environment: DATABASE_URL; PEER_CONCURRENCY (concurrent jobs, default 64), PEER_PER_ENDPOINT (16),
// PEER_LOCAL_QUEUE (graphile-worker's localQueue.size; -1 = off; default concurrency + 1, its
// documented starting point), PEER_COMPLETE_BATCH_MS (completeJobBatchDelay; -1 = off; default 0),
// PEER_TRIGGER=row (a row-level trigger with one add_job per delivery instead of the statement-level one).
// Prints "ready" once migrated and running; SIGTERM stops it gracefully.
import { readFileSync } from "node:fs";
import http from "node:http";
import { Logger, run, runMigrations } from "graphile-worker";
import pg from "pg";
import { signedHeaders } from "./sign.mjs";

const connectionString = process.env.DATABASE_URL;
if (!connectionString) throw new Error("DATABASE_URL is not set");
const int = (name, fallback) => {
  const v = process.env[name];
  return v === undefined || v === "" ? fallback : Number.parseInt(v, 10);
};
const concurrency = int("PEER_CONCURRENCY", 64);
const perEndpoint = int("PEER_PER_ENDPOINT", 16);
const localQueue = int("PEER_LOCAL_QUEUE", concurrency + 1);
const completeBatchMs = int("PEER_COMPLETE_BATCH_MS", 0);
const TIMEOUT_MS = 10_000;

// Node's agent pools per host:port, which is per endpoint here: maxSockets is the per-endpoint cap.
const agent = new http.Agent({ keepAlive: true, maxSockets: perEndpoint });

function post(url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", agent, headers, timeout: TIMEOUT_MS }, (res) => {
      res.resume(); // read the (small) answer to the end so the connection is reused
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`timeout: no response within ${TIMEOUT_MS} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

// Endpoint secrets stay in the database, not in job payloads; each is read once per process.
const secrets = new Map();
function secretOf(endpointId, helpers) {
  let s = secrets.get(endpointId);
  if (!s) {
    s = helpers.query("select secret from peer.endpoints where id = $1", [endpointId])
      .then((r) => r.rows[0].secret);
    s.catch(() => secrets.delete(endpointId));
    secrets.set(endpointId, s);
  }
  return s;
}

const taskList = {
  async deliver_webhook(payload, helpers) {
    const { delivery_id, endpoint_id, event_id, type, url, body: text } = payload;
    const body = Buffer.from(text);
    const secret = await secretOf(endpoint_id, helpers);
    const headers = signedHeaders(event_id, type, secret, body, Math.floor(Date.now() / 1000));
    let status = null;
    let error = null;
    try {
      status = await post(url, headers, body);
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (err) {
      error = `connection error: ${err.message}`;
    }
    if (error === null) {
      await helpers.query(
        `update peer.deliveries set status = 'delivered', attempts = attempts + 1, response_status = $2,
           delivered_at = now() where id = $1`,
        [delivery_id, status],
      );
      return;
    }
    await helpers.query(
      "update peer.deliveries set attempts = attempts + 1, response_status = $2, last_error = $3 where id = $1",
      [delivery_id, status, error],
    );
    throw new Error(error);
  },
};

// Warnings and errors only: per-job info lines would cost the peer CPU that ours does not spend.
const logger = new Logger(() => (level, message) => {
  if (level === "error" || level === "warning") console.error(`[peer ${level}] ${message}`);
});

// One pool for graphile-worker and the task's own updates, sized as its docs say: concurrentJobs + 2.
const pgPool = new pg.Pool({ connectionString, max: concurrency + 2 });
// graphile_worker's schema first (the trigger calls add_jobs), then the peer's own tables and trigger.
await runMigrations({ pgPool, logger });
await pgPool.query(readFileSync(new URL("./schema.sql", import.meta.url), "utf8"));
if (process.env.PEER_TRIGGER === "row") {
  await pgPool.query(`drop trigger members_peer_created on public.members;
    create trigger members_peer_created_row after insert on public.members
    for each row execute function peer.member_created()`);
}
const runner = await run({
  pgPool,
  concurrency,
  pollInterval: 2000,
  noHandleSignals: true,
  logger,
  taskList,
  preset: {
    worker: {
      localQueue: { size: localQueue },
      completeJobBatchDelay: completeBatchMs,
      failJobBatchDelay: completeBatchMs,
    },
  },
});
console.log("ready");
process.on("SIGTERM", () => {
  runner.stop().then(() => {
    agent.destroy();
    return pgPool.end().catch(() => {}); // already ended if graphile-worker owns it
  }).catch((err) => {
    console.error(`[peer] stop failed: ${err.message}`);
    process.exitCode = 1;
  });
});
await runner.promise;
