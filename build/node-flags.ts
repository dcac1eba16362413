/**
 * @module node-flags — the V8 flags edgeop's artifact runs with, wherever it is shipped: the
 * container images (entrypoint of the `node` image, `execArgv` of the single executable),
 * deploy/Dockerfile, and the test harness that runs the artifact as those do.
 */

/**
 * `--optimize-for-size`: V8 favours memory over speed (a smaller heap growing factor and young
 * generation). An operator's heap is a few MiB of live objects whose work is I/O-bound, and it
 * runs on every node of a small edge cluster, so its RSS is what costs.
 *
 * Measured with the 12-minute chaos soak (seed 42, 2026-12-01): the node agents' RSS grew 7.9–10.7 %
 * after warm-up without it (to 88–89 MiB; heap total 15 → 19 MiB while the live heap stayed
 * ~10–11 MiB) and 4.3–4.7 % with it (to 81 MiB), with every correctness invariant holding; over
 * 30 minutes, 3.3–5.2 % (test/soak/reports/2026-12-01/).
 * Not allowed in `NODE_OPTIONS` (Node refuses it there), hence a command-line flag.
 *
 * Its cost is start-up: it changes V8's flag hash, so V8 rejects Node's embedded code cache for
 * every built-in module the artifact loads (94 for `edgeop version`), and any cache of the
 * artifact made without it.
 * 40 interleaved `edgeop version` runs, CPU median, 2026-12-01: 113 ms with it, 94 ms without. The
 * artifact's own caches are therefore made under these flags (build/compile-cache.ts,
 * build/sea-main.cjs). Kept anyway: idle with nothing cached it saves little (72.8 vs 74.2 MiB RSS,
 * leader-elected operator), but under allocation churn it is what holds the heap down: a 50 MB live
 * set replaced continuously ran at 110 MiB RSS with it, 384 MiB without and 262 MiB with only
 * `--max-semi-space-size=1` (a heap-size flag, which leaves the hash and the caches alone).
 * Most flags added here change the hash too (heap sizes do not): the build remakes every cache
 * under the new list, and test/build/start-caches.test.ts checks that V8 takes them.
 */
export const NODE_FLAGS: readonly string[] = ['--optimize-for-size']
