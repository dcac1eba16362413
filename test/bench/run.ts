/**
 * @module run — edgeop's benchmark suite against the libraries a user would pick instead
 * (issue 9): `@kubernetes/client-node`, client-go and, when it builds here, kube-rs.
 *
 *   node test/bench/run.ts                       full run (≈ 15 min on 2 cores)
 *   node test/bench/run.ts --quick               smoke run with small sizes (≈ 3 min)
 *   node test/bench/run.ts --only memory,list    some workloads
 *   node test/bench/run.ts --repeats 5 --out /tmp/bench
 *
 * Workloads: coldstart, watch, memory, list, queue, artifact (see lib/workloads.ts).
 * Each peer runs in its own process, the peers interleave round by round, and the report
 * gives median and spread with ratios to edgeop computed pair by pair (lib/stats.ts).
 * Writes Markdown, one SVG chart per workload and raw.json to the results folder.
 *
 * The control plane: a private etcd + kube-apiserver started by this process
 * (test/controlplane/env.ts), unless `EDGEOP_TEST_CONTROL_URL` points at a running one
 * (`npm run cluster:up`); there the generated Pods are kept in `edgeop-bench-*` namespaces
 * and reused by the next run. Only loopback traffic; every loop is bounded.
 * A script, never part of `npm test`: nothing here asserts a time.
 */
import { readFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { cpus, totalmem } from 'node:os'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { isAlreadyExists } from '../../src/transport/api-error.ts'
import { getTestEnv } from '../controlplane/env.ts'
import { adminClient } from '../support/kube.ts'
import { type Capabilities, detectCapabilities } from './lib/capabilities.ts'
import { apiserverEncoding } from './lib/encoding.ts'
import { readRun, writeResults } from './lib/output.ts'
import {
  clientGoPeer,
  clientNodePeer,
  edgeopPeer,
  kubeRsPeer,
  type MissingPeer,
  type Peer,
  ROOT,
} from './lib/peers.ts'
import { podIndex, seedPods } from './lib/pods.ts'
import { ReplayServer } from './lib/replay.ts'
import type { WorkloadReport } from './lib/report.ts'
import { recordReplay, watchReplay } from './lib/watch-replay.ts'
import {
  artifact,
  type Ctx,
  coldStart,
  listThroughput,
  memory,
  steadyWatch,
  workqueue,
} from './lib/workloads.ts'

const WORKLOADS = [
  'coldstart',
  'watch',
  'memory',
  'list',
  'encoding',
  'queue',
  'artifact',
  'watch-live',
] as const
type Workload = (typeof WORKLOADS)[number]
/** What runs without --only: the live watch is opt-in (its writer, not the peers, sets its pace). */
const DEFAULT_WORKLOADS: readonly Workload[] = WORKLOADS.filter((w) => w !== 'watch-live')

const USAGE = `usage: node test/bench/run.ts [options]
  --only <w[,w]>         workloads: ${WORKLOADS.join(', ')} (default all but watch-live)
  --repeats <n>          rounds per workload (default 3; --quick 2)
  --quick                small sizes for a smoke run (≈ 3 min)
  --out <dir>            results folder (default test/bench/results/<date>[-quick]/)
  --replay-events <n>    MODIFIED events recorded and replayed in the watch workload (default 10,000; --quick 2,000)
  --watch-rate <n>       writes per second in the watch-live workload (default 50; --quick 20)
  --watch-seconds <n>    length of watch-live's write window (default 60; --quick 10)
  --watch-repeats <n>    rounds of the watch-live workload (default 1; --quick 1)
  --queue-cycles <n>     cycles per workqueue row (default 500,000; --quick 100,000)
  --no-rust              skip the kube-rs peer
  --rust-build-minutes <n>  give up on building kube-rs after this long (default 12)
  --from <raw.json>      render a results folder again from its raw.json (no run)
  --operator-args "<a b>"   arguments of the operator in workload 6 (default: run with loopback ports;
                         {probePort} and {metricsPort} are replaced by free ports, and /readyz is awaited)`

const { values: opt } = parseArgs({
  options: {
    only: { type: 'string' },
    repeats: { type: 'string' },
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    'replay-events': { type: 'string' },
    'watch-rate': { type: 'string' },
    'watch-seconds': { type: 'string' },
    'watch-repeats': { type: 'string' },
    'queue-cycles': { type: 'string' },
    'no-rust': { type: 'boolean', default: false },
    'rust-build-minutes': { type: 'string' },
    'operator-args': { type: 'string' },
    from: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (opt.help) {
  process.stdout.write(`${USAGE}\n`)
  process.exit(0)
}
if (opt.from !== undefined) {
  // Render a results folder again from its raw.json (after a change to the report code).
  const out = opt.out ?? dirname(opt.from)
  await mkdir(out, { recursive: true })
  process.stdout.write(`${await writeResults(out, await readRun(opt.from))}\n`)
  process.exit(0)
}

function intFlag(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value.replace(/[_,]/g, ''))
  if (!Number.isInteger(n) || n < 0) {
    process.stderr.write(`--${name}: expected a whole number, got ${JSON.stringify(value)}\n${USAGE}\n`)
    process.exit(2)
  }
  return n
}

const quick = opt.quick
const only = (opt.only?.split(',').map((s) => s.trim()) ?? [...DEFAULT_WORKLOADS]) as Workload[]
for (const w of only)
  if (!WORKLOADS.includes(w)) {
    process.stderr.write(`--only: unknown workload ${JSON.stringify(w)}\n${USAGE}\n`)
    process.exit(2)
  }
const rounds = intFlag('repeats', opt.repeats, quick ? 2 : 3)
const sizes = quick ? [0, 100, 1000] : [0, 1000, 10_000]
const bigPods = sizes[sizes.length - 1] as number
const watch = {
  pods: quick ? 50 : 100,
  rate: intFlag('watch-rate', opt['watch-rate'], quick ? 20 : 50),
  seconds: intFlag('watch-seconds', opt['watch-seconds'], quick ? 10 : 60),
  rounds: intFlag('watch-repeats', opt['watch-repeats'], 1),
}
const replayEvents = intFlag('replay-events', opt['replay-events'], quick ? 2000 : 10_000)
const queueCycles = intFlag('queue-cycles', opt['queue-cycles'], quick ? 100_000 : 500_000)
const idleSeconds = quick ? 3 : 5
const operatorArgs = (
  opt['operator-args'] ??
  'run --metrics-bind-address=127.0.0.1:{metricsPort} --health-probe-bind-address=127.0.0.1:{probePort}'
)
  .split(' ')
  .filter(Boolean)
const date = new Date().toISOString().slice(0, 10)
const outDir = opt.out ?? join(ROOT, 'test/bench/results', `${date}${quick ? '-quick' : ''}`)

const started = performance.now()
const elapsed = (): string => `${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s`
const log = (line: string): void => void process.stderr.write(`[bench ${elapsed()}] ${line}\n`)
const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

// ---------------------------------------------------------------- peers
const loadAtStart = loadavg()
const peers: Peer[] = [await edgeopPeer(), await clientNodePeer()]
const missing: MissingPeer[] = []
const go = await clientGoPeer(log)
if ('command' in go) peers.push(go)
else missing.push(go)
if (opt['no-rust']) missing.push({ id: 'kube-rs', reason: 'skipped (--no-rust)' })
else {
  const rs = await kubeRsPeer(log, intFlag('rust-build-minutes', opt['rust-build-minutes'], 12) * 60_000)
  if ('command' in rs) peers.push(rs)
  else missing.push(rs)
}
for (const m of missing) log(`peer ${m.id} left out: ${m.reason.split('\n')[0]}`)
log(`peers: ${peers.map((p) => p.label).join(', ')}`)

// ---------------------------------------------------------------- control plane and data
log('starting the control plane …')
const env = await getTestEnv({ exclusive: true })
const client = adminClient(env, env.server)
log(`kube-apiserver ${env.versions.kubernetes} at ${env.server}`)

const nsReady = new Map<number, Promise<string>>()
/** `edgeop-bench-pods-<n>` holding exactly the generated Pods 0..n-1 (seeded once, then reused). */
function podsNamespace(n: number): Promise<string> {
  let p = nsReady.get(n)
  if (p === undefined) {
    p = (async () => {
      const name = `edgeop-bench-pods-${n}`
      try {
        await client
          .resource(CORE_TYPES.namespaces)
          .create({ metadata: { name, labels: { 'edgeop.dev/bench': 'true' } } })
      } catch (err) {
        if (!isAlreadyExists(err)) throw err
      }
      const have = new Set(
        ((await client.resource(CORE_TYPES.pods, name).listMetadata()).items ?? []).map((o) =>
          podIndex(o.metadata.name as string),
        ),
      )
      const todo = Array.from({ length: n }, (_, i) => i).filter((i) => !have.has(i))
      if (todo.length) {
        log(`creating ${todo.length.toLocaleString('en')} Pods in ${name} (3 writes each) …`)
        const t0 = performance.now()
        await seedPods(client, name, todo, {
          concurrency: 24,
          onProgress: (d) => log(`  ${d.toLocaleString('en')} / ${todo.length.toLocaleString('en')}`),
        })
        log(`  done in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
      }
      return name
    })()
    nsReady.set(n, p)
  }
  return p
}

const apiserverPid = (await env.stats()).processes.find(
  (p) => /apiserver/.test(p.name) && !/uncached/.test(p.name) && p.pid !== undefined,
)?.pid
const target = { server: env.server, tls: { ca: env.caPem, cert: env.admin.certPem, key: env.admin.keyPem } }
const noCaps: Capabilities = { informerProtobuf: false, listProtobuf: false, compact: false, evidence: [] }
const ctx: Ctx = {
  client,
  kubeconfig: env.kubeconfig,
  peers,
  log,
  podsNamespace,
  rounds,
  caps: noCaps,
  target,
  apiserverPid,
}
log(`kube-apiserver pid: ${apiserverPid ?? 'not visible (its CPU time is not measured)'}`)

// Seed everything first, so no workload's timing includes seeding.
const needed = new Set<number>()
if (only.includes('coldstart')) for (const n of sizes) needed.add(n)
if (only.includes('memory') || only.includes('list') || only.includes('encoding')) needed.add(bigPods)
needed.add(watch.pods) // the recorded watch's Pods, also the probe of edgeop's options
for (const n of [...needed].sort((a, b) => a - b)) await podsNamespace(n)

// Record the watch stream (both formats) and find out which wire-format and store options the build honours.
const replayNs = await podsNamespace(watch.pods)
log(`recording the watch of ${replayNs} …`)
const recordings = await recordReplay(ctx, replayNs, only.includes('watch') ? replayEvents : 0)
const replay = new ReplayServer(recordings)
await replay.listen()
ctx.caps = await detectCapabilities(replay, replayNs)
log(
  `edgeop options: informer wire protobuf ${ctx.caps.informerProtobuf ? 'yes' : 'no'}, list wire protobuf ${ctx.caps.listProtobuf ? 'yes' : 'no'}, compact store ${ctx.caps.compact ? 'yes' : 'no'} (${ctx.caps.evidence.join('; ')})`,
)

// ---------------------------------------------------------------- run
const reports: WorkloadReport[] = []
const timings: string[] = []
let cold: WorkloadReport | undefined
for (const w of WORKLOADS) {
  if (!only.includes(w)) continue
  const t0 = performance.now()
  log(`workload ${w} …`)
  let r: WorkloadReport
  switch (w) {
    case 'coldstart':
      r = cold = await coldStart(ctx, sizes, idleSeconds)
      break
    case 'watch':
      r = await watchReplay(ctx, { namespace: replayNs, recordings, server: replay })
      break
    case 'watch-live':
      r = await steadyWatch(ctx, watch)
      break
    case 'encoding':
      r = await apiserverEncoding(ctx, bigPods, 3)
      break
    case 'memory':
      r = await memory(ctx, bigPods)
      break
    case 'list':
      r = await listThroughput(ctx, bigPods, 3)
      break
    case 'queue':
      r = await workqueue(ctx, queueCycles)
      break
    case 'artifact':
      r = await artifact(ctx, {
        operatorArgs,
        idleSeconds: quick ? 5 : 10,
        ...(cold ? { peerIdle: cold } : {}),
      })
      break
  }
  reports.push(r)
  const secs = (performance.now() - t0) / 1000
  timings.push(`${w} ${secs.toFixed(0)} s`)
  log(
    `workload ${w} done in ${secs.toFixed(0)} s${r.notes.some((n) => n.startsWith('**failed**')) ? ' (with failures: see notes)' : ''}`,
  )
}
await client.close()
await replay.close()

// ---------------------------------------------------------------- report
const cpuModel =
  /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model
const environment = [
  '| | |',
  '|---|---|',
  `| date | ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} |`,
  `| run | ${quick ? '--quick (small sizes: a smoke run, not numbers to quote)' : 'full'}; ${rounds} rounds; workloads: ${only.join(', ')}; took ${((performance.now() - started) / 60_000).toFixed(1)} min (${timings.join(', ')}) |`,
  `| machine | ${cpus().length} CPUs (nproc), ${cpuModel}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB; load average ${loadAtStart} at start, ${loadavg()} at end |`,
  `| runtimes | Node ${process.version}; Kubernetes ${env.versions.kubernetes} (kube-apiserver with watch cache, etcd ${env.versions.etcd}, both on this machine) |`,
  `| peers | ${peers.map((p) => p.label).join('; ')} |`,
  `| edgeop options (wire format, store), found by trying | informer \`format: 'protobuf'\`: ${ctx.caps.informerProtobuf ? 'honoured' : 'not in this build'}; list \`format: 'protobuf'\`: ${ctx.caps.listProtobuf ? 'honoured' : 'not in this build'}; \`store: 'compact'\`: ${ctx.caps.compact ? 'honoured' : 'not in this build'} |`,
  ...missing.map((m) => `| left out | ${m.id}: ${m.reason.split('\n')[0]} |`),
].join('\n')

const shownPeers = (['edgeop', 'client-node', 'client-go', 'kube-rs'] as const).filter((p) =>
  peers.some((x) => x.id === p),
)
await mkdir(outDir, { recursive: true })
const summary = await writeResults(outDir, {
  date,
  quick,
  environment,
  subtitle: `${date} · Node ${process.version} · Kubernetes ${env.versions.kubernetes} · ${cpus().length} CPUs · ${quick ? 'quick run' : 'full run'}`,
  bigPods,
  watchCase: `${replayEvents.toLocaleString('en')} MODIFIED events`,
  peers: shownPeers,
  reports,
})
process.stdout.write(`${summary}\n`)
log(`results in ${outDir}`)
process.exit(0)
