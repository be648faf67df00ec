// Holds a throwaway cluster made by scripts/bench/run.sh for another process: prints its URL, then
// waits until its standard input closes (the caller is done, or died), and run.sh removes the cluster.
//   bash scripts/bench/run.sh cluster_hold   ->   "cluster postgresql://..."
const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("BENCH_DATABASE_URL is not set; run through scripts/bench/run.sh cluster_hold");
console.log(`cluster ${url}`);
for await (const _ of Deno.stdin.readable) {
  // Nothing to read; the loop ends when the caller closes our input.
}
