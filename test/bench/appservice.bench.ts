/**
 * @module appservice.bench — the numbers of the running operator, measured on
 * the local control plane (a script, never a test):
 * - start time with the shipped V8 flags (build/node-flags.ts), as each image starts it: node + the
 *   bundle with the compile cache the `node` image ships, the same without it, the single
 *   executable, and node + the bundle without the flags for reference; `edgeop version` to its exit,
 *   and spawn → the first HTTP request of `edgeop run` reaching a local listener (lib/start-time.ts);
 * - cold start of `edgeop run` to "caches synced" and its idle RSS, leader-elected with nothing
 *   cached, for node + bundle and the single executable, with what the RSS is made of;
 * - reconcile throughput: N AppServices created at once, time until all are Ready
 *   (replicas 0, so the operator — not controller-manager or KWOK — is what is measured);
 * - idle RSS with N AppServices cached.
 *
 *   node test/bench/appservice.bench.ts [--count 1000] [--starts 30]
 */
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { compileCacheEnv, writeCompileCache } from '../../build/compile-cache.ts'
import { NODE_FLAGS } from '../../build/node-flags.ts'
import { seaPath } from '../../build/sea.ts'
import { HOST_ARCH, stripBinary } from '../../build/targets.ts'
import { APPSERVICES } from '../../src/operators/appservice/api.ts'
import { getTestEnv } from '../controlplane/env.ts'
import { createAppServices, installAppServiceCrd } from '../support/appservice.ts'
import { adminClient } from '../support/kube.ts'
import { ARTIFACT, benchRunArgs, type OperatorProcess, startOperator } from '../support/operator-process.ts'
import { describeMs, type StartVariant, spawnToFirstRequest, timeCommands } from './lib/start-time.ts'

const { values } = parseArgs({
  options: { count: { type: 'string', default: '1000' }, starts: { type: 'string', default: '30' } },
})
const COUNT = Number(values.count)
const STARTS = Number(values.starts)
const MiB = 2 ** 20
/** VmRSS, and its anonymous and file-backed parts (the Node binary's pages), MiB. */
const rssMiB = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) / 1024
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') }
}
/** CPU seconds (user + system) `pid` has used: /proc/<pid>/stat fields 14 and 15, in clock ticks (USER_HZ, 100 on Linux). */
const cpuSecs = async (pid: number) => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) / 100
}
const settle = () => new Promise((r) => setTimeout(r, 5000))

// As the `node` image runs it: a stripped Node, the artifact, its compile cache made under the flags.
const scratch = await mkdtemp(join(tmpdir(), 'edgeop-bench-start-'))
const node = join(scratch, 'node')
await copyFile(process.execPath, node)
if (!stripBinary(HOST_ARCH, node)) throw new Error('strip failed')
await copyFile(ARTIFACT, join(scratch, 'edgeop.cjs'))
await writeCompileCache(HOST_ARCH, node, scratch, process.getuid?.() ?? 0)
const bundle = join(scratch, 'edgeop.cjs')
const NODE_IMAGE: StartVariant = {
  name: 'node + bundle, compile cache (the `node` image)',
  command: [node, ...NODE_FLAGS, bundle],
  env: compileCacheEnv(scratch),
}
// Copied too: the file postject wrote in one go sits in the page cache as large folios, and the
// kernel maps a whole folio on a fault, so run from there the same binary had 60 MiB of file-backed
// RSS instead of 43 (2026-12-01); a copy, like a container runtime's layer extraction, writes it in chunks.
const sea = join(scratch, 'edgeop')
await copyFile(seaPath(HOST_ARCH), sea)
const SEA: StartVariant = { name: 'single executable (the `sea` image)', command: [sea] }
const variants: StartVariant[] = [
  NODE_IMAGE,
  { name: 'node + bundle, no cache', command: [node, ...NODE_FLAGS, bundle] },
  SEA,
  { name: `node + bundle, no cache, without ${NODE_FLAGS.join(' ')}`, command: [node, bundle] },
]

const rows: [string, string][] = []
for (const t of timeCommands(variants, ['version'], STARTS)) {
  const cpu = t.cpuMs.reduce((a, b) => a + b, 0) / t.cpuMs.length
  rows.push([
    `\`edgeop version\`, ${t.name}: wall median [p25–p75], mean CPU`,
    `${describeMs(t.wallMs)}, CPU ${cpu.toFixed(0)} ms`,
  ])
}
for (const t of await spawnToFirstRequest(variants, STARTS, scratch)) {
  rows.push([
    `spawn → first request of \`edgeop run\`, ${t.name}: wall median [p25–p75]`,
    describeMs(t.wallMs),
  ])
}

const env = await getTestEnv()
await env.startControllers() // Deployments need controller-manager to report status
const admin = adminClient(env, env.server)
await installAppServiceCrd(admin)
const ns = await env.createNamespace('bench')
/** `edgeop run` leader-elected (its own Lease), started as `variant` starts it. */
const startLeader = (variant: StartVariant, lease: string) =>
  startOperator(
    'bench',
    [
      ...benchRunArgs(env.kubeconfig, ns),
      '--leader-elect',
      `--leader-election-id=${lease}`,
      `--leader-election-namespace=${ns}`,
    ],
    60_000,
    { command: variant.command, ...(variant.env ? { env: { ...variant.env } } : {}) },
  )
/** A row of `op`'s idle RSS with `what` cached, and what it is made of. */
const cachedRow = async (op: OperatorProcess, what: string) => {
  const m = async (name: string) => ((await op.metric(name)) ?? Number.NaN) / MiB
  const { rss, anon, file } = await rssMiB(op.child.pid!)
  rows.push([
    `idle RSS, leader, ${what}`,
    `${rss.toFixed(1)} MiB: ${anon.toFixed(1)} anonymous (V8 heap ${(await m('nodejs_heap_size_total_bytes')).toFixed(1)}, ${(await m('nodejs_heap_size_used_bytes')).toFixed(1)} used; external ${(await m('nodejs_external_memory_bytes')).toFixed(1)}) + ${file.toFixed(1)} file-backed (the binary's pages)`,
  ])
}
/** Idle RSS of a leading operator with nothing cached, and what it is made of. */
const idleRow = async (op: OperatorProcess, label: string) => {
  await op.waitForLog((l) => l.msg === 'leading: starting controllers')
  await settle()
  await cachedRow(op, `nothing cached, ${label}`)
}
const seaOp = await startLeader(SEA, 'bench-sea')
await idleRow(seaOp, SEA.name)
seaOp.kill('SIGTERM')
await seaOp.exited
const t0 = performance.now()
const op = await startLeader(NODE_IMAGE, 'bench')
await op.waitForLog((l) => l.msg === 'caches synced')
rows.push([
  `cold start of \`edgeop run\` to caches synced (process spawn included), ${NODE_IMAGE.name}`,
  `${(performance.now() - t0).toFixed(0)} ms`,
])
await idleRow(op, NODE_IMAGE.name)

const apps = admin.resource(APPSERVICES, ns)
const cpuBefore = await cpuSecs(op.child.pid!)
const created = performance.now()
await createAppServices(apps, COUNT)
/** How many AppServices the operator has reconciled (observedGeneration current) and how many are Ready. */
const progress = async () => {
  let reconciled = 0
  let ready = 0
  for await (const page of apps.listPages({ limit: 500 })) {
    for (const a of page.items) {
      if (a.status?.observedGeneration === a.metadata.generation) reconciled++
      if (a.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) ready++
    }
  }
  return { reconciled, ready }
}
// Poll gently: listing every AppService is itself load on a 2-core apiserver.
let reconciledSecs: number | undefined
let reconciledCpu: number | undefined
for (let p = { reconciled: 0, ready: 0 }; p.ready < COUNT; ) {
  await new Promise((r) => setTimeout(r, 2000))
  p = await progress()
  const secs = (performance.now() - created) / 1000
  if (reconciledSecs === undefined && p.reconciled === COUNT) {
    reconciledSecs = secs
    reconciledCpu = (await cpuSecs(op.child.pid!)) - cpuBefore
  }
  process.stderr.write(
    `reconciled ${p.reconciled}, ready ${p.ready} of ${COUNT} after ${secs.toFixed(0)} s\n`,
  )
}
const readySecs = (performance.now() - created) / 1000
const readyCpu = (await cpuSecs(op.child.pid!)) - cpuBefore
const rate = (s: number, cpu: number) =>
  `${s.toFixed(1)} s (${(COUNT / s).toFixed(0)}/s, creation included); operator CPU ${cpu.toFixed(1)} s`
rows.push([
  `reconcile throughput: ${COUNT} AppServices created → all reconciled (children applied, status written)`,
  rate(reconciledSecs ?? readySecs, reconciledCpu ?? readyCpu),
])
rows.push([
  `${COUNT} AppServices created → all Ready (gated by controller-manager rolling out ${COUNT} Deployments)`,
  rate(readySecs, readyCpu),
])
await settle()
await cachedRow(op, `${COUNT} AppServices (+ ${COUNT} Deployments and Services cached)`)
op.kill('SIGTERM')
await op.exited
await admin.close()
await rm(scratch, { recursive: true, force: true })

process.stdout.write(
  `\n| what (${new Date().toISOString().slice(0, 10)}, ${process.version}) | measured |\n| --- | --- |\n${rows.map(([a, b]) => `| ${a} | ${b} |`).join('\n')}\n`,
)
process.exit(0)
