/**
 * @module sharding.bench — what sharding buys on one machine, a script, never a test:
 * the same set of N AppServices (default 3,000; replicas 0, no database: the operator's own work)
 * is created in a fresh namespace for each shard count (1, 2, 3), then that many `--shard` replicas
 * of the built artifact start at once. Measured per shard count:
 * - the time from their spawn until every AppService is labelled with an owner, and until every
 *   one is reconciled (`status.observedGeneration` current), and that rate;
 * - per replica, after a 5 s settle: objects owned (`edgeop_shard_objects`), reconciles
 *   (`controller_runtime_reconcile_total`), handovers (`edgeop_shard_handovers_total`: at start a
 *   member may take objects before it sees the others, then drains them), CPU time over the run
 *   (/proc/<pid>/stat), RSS (/proc), V8 heap used and live after the last full GC (its metrics);
 * - with 2 or more: one replica SIGKILLed; the time until every object it owned is labelled with a
 *   survivor (the last `assigned` line in their logs) and until every one has been reconciled again
 *   by a survivor (its `reconciled` line, debug level, starting after the kill).
 * Short Leases (`--lease` 4 s, renew 3 s, `--period` 1 s) so the takeover shows in seconds; the
 * table says what the defaults (15 s / 2 s) imply. The load average before and after each count is
 * printed: the machine may be shared.
 *
 *   npm run build && npm run bench:sharding [-- --count 3000 --shards 1,2,3 --lease 4 --period 1]
 */
import { readFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { APPSERVICES } from '../../src/operators/appservice/api.ts'
import { SHARD_LABEL_PREFIX } from '../../src/sharding/shard.ts'
import { getTestEnv } from '../controlplane/env.ts'
import { metricSum } from '../soak/fleet.ts'
import { createAppServices, installAppServiceCrd } from '../support/appservice.ts'
import { adminClient } from '../support/kube.ts'
import { type OperatorProcess, startOperator } from '../support/operator-process.ts'

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '3000' },
    shards: { type: 'string', default: '1,2,3' },
    lease: { type: 'string', default: '4' },
    period: { type: 'string', default: '1' },
  },
})
const COUNT = Number(values.count)
const SHARDS = values.shards.split(',').map(Number)
const LEASE_S = Number(values.lease)
const PERIOD_S = Number(values.period)
const RING = 'appsrv-bench'
const LABEL = SHARD_LABEL_PREFIX + RING
/** Between two looks at the AppServices: listing 3,000 is itself load on a 2-core apiserver. */
const POLL_MS = 2000
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')
const mib = (bytes: number | undefined) => (bytes === undefined ? '—' : (bytes / 2 ** 20).toFixed(1))
const s1 = (ms: number | undefined) => (ms === undefined ? '—' : (ms / 1000).toFixed(1))
/** RSS of `pid` in bytes. */
const rss = async (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]) * 1024
/** utime + stime of `pid`, in ms (100 Hz clock ticks on Linux). */
const cpuMs = async (pid: number) => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}
/** The member id a replica logs with its informers (`<label>=<id>`). */
const memberOf = async (p: OperatorProcess) => {
  const l = await p.waitForLog((x) => x.msg === 'watching' && String(x.informer).includes(LABEL))
  return String(l.informer).match(new RegExp(`${LABEL.replace(/[./]/g, '\\$&')}=([0-9a-f]+)`))![1]!
}

const env = await getTestEnv()
const admin = adminClient(env, env.server)
await installAppServiceCrd(admin)

interface ReplicaRow {
  n: number
  member: string
  owned: number | undefined
  reconciles: number | undefined
  handovers: number | undefined
  cpuS: number
  rss: number
  heapUsed: number | undefined
  heapLive: number | undefined
}
interface CountRow {
  n: number
  createdS: number
  assignedMs: number | undefined
  reconciledMs: number
  loadBefore: string
  loadAfter: string
  replicas: ReplicaRow[]
  kill?: {
    member: string
    objects: number
    takenOverMs: number | undefined
    reconciledMs: number | undefined
  }
}
const results: CountRow[] = []

for (const n of SHARDS) {
  const ns = await env.createNamespace(`bench-shard${n}`)
  const apps = admin.resource(APPSERVICES, ns)
  const c0 = performance.now()
  await createAppServices(apps, COUNT)
  const createdS = (performance.now() - c0) / 1000
  await sleep(5000) // the apiserver settles after the creates
  const loadBefore = load()
  process.stderr.write(
    `${n} shard(s): ${COUNT} AppServices created in ${createdS.toFixed(1)} s; load ${loadBefore}\n`,
  )
  const t0 = performance.now()
  const replicas = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      startOperator(`shard${n}-${i}`, [
        'run',
        `--kubeconfig=${env.kubeconfig}`,
        `--namespace=${ns}`,
        '--shard',
        `--leader-election-id=${RING}`,
        `--leader-election-namespace=${ns}`,
        `--leader-election-lease-duration=${LEASE_S}s`,
        `--leader-election-renew-deadline=${LEASE_S - 1}s`,
        `--leader-election-retry-period=${PERIOD_S}s`,
        // As the operator benchmark: the client limit raised and 4 workers, so the operator, not its throttle, is measured.
        '--qps=200',
        '--burst=400',
        '--max-concurrent-reconciles=4',
        '--log-level=debug', // the `reconciled` and `assigned` lines
      ]),
    ),
  )
  const members = await Promise.all(replicas.map(memberOf))
  let assignedMs: number | undefined
  let reconciledMs: number | undefined
  while (reconciledMs === undefined) {
    await sleep(POLL_MS)
    for (const p of replicas)
      if (p.child.exitCode !== null || p.child.signalCode !== null)
        throw new Error(
          `${p.name} exited (${p.child.exitCode ?? p.child.signalCode}): ${p.logs
            .slice(-8)
            .map((l) => JSON.stringify(l))
            .join('\n')}`,
        )
    let labelled = 0
    let reconciled = 0
    for await (const page of apps.listPages({ limit: 500 }))
      for (const a of page.items) {
        if (a.metadata.labels?.[LABEL]) labelled++
        if (a.status?.observedGeneration === a.metadata.generation) reconciled++
      }
    const ms = performance.now() - t0
    if (assignedMs === undefined && labelled === COUNT) assignedMs = ms
    if (reconciled === COUNT) reconciledMs = ms
    process.stderr.write(`  ${s1(ms)} s: labelled ${labelled}, reconciled ${reconciled}\n`)
  }
  await sleep(5000)
  const rows: ReplicaRow[] = []
  for (const [i, p] of replicas.entries()) {
    const text = await fetch(p.metricsUrl).then((r) => r.text())
    rows.push({
      n: i,
      member: members[i]!,
      owned: metricSum(text, 'edgeop_shard_objects'),
      reconciles: metricSum(text, 'controller_runtime_reconcile_total', { controller: 'appservice' }),
      handovers: metricSum(text, 'edgeop_shard_handovers_total'),
      cpuS: (await cpuMs(p.child.pid!)) / 1000,
      rss: await rss(p.child.pid!),
      heapUsed: metricSum(text, 'nodejs_heap_size_used_bytes'),
      heapLive: metricSum(text, 'nodejs_heap_size_used_after_major_gc_bytes'),
    })
  }
  const row: CountRow = {
    n,
    createdS,
    assignedMs,
    reconciledMs,
    loadBefore,
    loadAfter: load(),
    replicas: rows,
  }
  if (n >= 2) {
    // SIGKILL the last replica; the survivors take its objects over and reconcile them again.
    const victim = replicas[n - 1]!
    const member = members[n - 1]!
    const mine = new Set<string>()
    for await (const page of apps.listPages({ limit: 500, labelSelector: `${LABEL}=${member}` }))
      for (const a of page.items) mine.add(`${ns}/${a.metadata.name}`)
    const killedAt = Date.now()
    victim.kill('SIGKILL')
    const survivors = replicas.slice(0, n - 1)
    let takenOverMs: number | undefined
    let againMs: number | undefined
    while (Date.now() - killedAt < 120_000 && againMs === undefined) {
      await sleep(250)
      const lines = survivors.flatMap((p) => p.logs)
      const assigned = lines.filter(
        (l) => l.msg === 'assigned' && mine.has(String(l.object)) && Date.parse(String(l.ts)) >= killedAt,
      )
      if (new Set(assigned.map((l) => l.object)).size === mine.size)
        takenOverMs = Math.max(...assigned.map((l) => Date.parse(String(l.ts)))) - killedAt
      const again = new Map<string, number>()
      for (const l of lines)
        if (l.msg === 'reconciled' && mine.has(String(l.object)) && Number(l.from) >= killedAt)
          again.set(String(l.object), Math.min(again.get(String(l.object)) ?? Infinity, Number(l.to)))
      if (again.size === mine.size) againMs = Math.max(...again.values()) - killedAt
    }
    row.kill = { member, objects: mine.size, takenOverMs, reconciledMs: againMs }
    await victim.exited
  }
  for (const p of replicas) p.kill('SIGTERM')
  await Promise.all(replicas.map((p) => p.exited))
  results.push(row)
  // The next count gets a fresh namespace; this one goes (its AppServices have no finalizer without a database).
  await admin
    .resource(CORE_TYPES.namespaces)
    .delete(ns)
    .catch(() => {})
  await sleep(10_000)
}
await admin.close()

const out: string[] = [
  `Sharding: ${COUNT.toLocaleString('en')} AppServices (replicas 0, no database), \`--shard\` replicas of dist/edgeop.cjs started at once on objects already created; Lease ${LEASE_S} s, renew ${LEASE_S - 1} s, period ${PERIOD_S} s; \`--qps=200 --burst=400 --max-concurrent-reconciles=4\`. ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${(await import('node:os')).cpus().length} cores.`,
  '',
  '| Shards | All labelled (s) | All reconciled (s) | Rate (/s) | Load average before → after (1/5/15 min) |',
  '|--:|--:|--:|--:|---|',
  ...results.map(
    (r) =>
      `| ${r.n} | ${s1(r.assignedMs)} | ${s1(r.reconciledMs)} | ${(COUNT / (r.reconciledMs / 1000)).toFixed(0)} | ${r.loadBefore} → ${r.loadAfter} |`,
  ),
  '',
  'Per replica, 5 s after all were reconciled (RSS from /proc; heap from its own metrics; CPU over its whole life):',
  '',
  '| Shards | Replica | Owned | Reconciles | Handovers | CPU (s) | RSS (MiB) | Heap used (MiB) | Live heap (MiB) |',
  '|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ...results.flatMap((r) =>
    r.replicas.map(
      (x) =>
        `| ${r.n} | ${x.n} | ${x.owned ?? '—'} | ${x.reconciles ?? '—'} | ${x.handovers ?? '—'} | ${x.cpuS.toFixed(1)} | ${mib(x.rss)} | ${mib(x.heapUsed)} | ${mib(x.heapLive)} |`,
    ),
  ),
  '',
  `One replica SIGKILLed (Lease ${LEASE_S} s, period ${PERIOD_S} s): time from the kill until every object it owned is labelled with a survivor, and until each has been reconciled again by one:`,
  '',
  '| Shards | Objects of the dead replica | All taken over (s) | All reconciled again (s) |',
  '|--:|--:|--:|--:|',
  ...results
    .filter((r) => r.kill)
    .map((r) => `| ${r.n} | ${r.kill!.objects} | ${s1(r.kill!.takenOverMs)} | ${s1(r.kill!.reconciledMs)} |`),
  '',
  `With the defaults (Lease 15 s, period 2 s) the takeover waits for the Lease to expire on the survivors' clocks (15 s after the last renewal they saw, which is up to one period old) and for two passes (the orphans are listed with the previous pass's members): about 15 + 2 × 2 = 19 s instead of ${LEASE_S} + 2 × ${PERIOD_S} = ${LEASE_S + 2 * PERIOD_S} s, then the same reconcile time.`,
]
process.stdout.write(`${out.join('\n')}\n`)
process.exit(0)
