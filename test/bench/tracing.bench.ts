/**
 * @module tracing.bench — what tracing costs the running operator, a script, never a
 * test: the built artifact reconciles N AppServices (replicas 0: the operator's own work) on the
 * local control plane with tracing off, on with sampling 0 (spans made, context propagated,
 * nothing recorded) and on with sampling 1 (every span exported to a real Jaeger). Reported per
 * mode, median over the rounds (modes interleaved, order rotated each round): the time from the
 * first create to all reconciled, that rate, and the operator process's CPU time over the same
 * window (/proc/<pid>/stat), in total and per reconcile.
 *
 *   npm run build && node test/bench/tracing.bench.ts [--count 300] [--rounds 3]
 */
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { APPSERVICES } from '../../src/operators/appservice/api.ts'
import { getTestEnv } from '../controlplane/env.ts'
import { createAppServices, installAppServiceCrd } from '../support/appservice.ts'
import { startJaeger } from '../support/jaeger.ts'
import { adminClient } from '../support/kube.ts'
import { benchRunArgs, startOperator } from '../support/operator-process.ts'

const { values } = parseArgs({
  options: { count: { type: 'string', default: '300' }, rounds: { type: 'string', default: '3' } },
})
const COUNT = Number(values.count)
const ROUNDS = Number(values.rounds)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
/** utime + stime of `pid`, in ms (the kernel's clock ticks are 100 Hz on Linux). */
const cpuMs = async (pid: number) => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

const jaeger = await startJaeger()
const SERVICE = 'edgeop-bench'
const MODES = (
  [
    { name: 'tracing off', args: [], env: {} },
    {
      name: 'tracing on, sampling 0',
      args: ['--tracing=otlp'],
      env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
    },
    {
      name: 'tracing on, sampling 1 (to Jaeger)',
      args: ['--tracing=otlp'],
      env: { OTEL_TRACES_SAMPLER: 'parentbased_always_on' },
    },
  ] as { name: string; args: string[]; env: Record<string, string> }[]
).map((m) => ({
  ...m,
  env: { ...m.env, OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpHttp, OTEL_SERVICE_NAME: SERVICE },
  secs: [] as number[],
  cpu: [] as number[],
  dropped: 0,
}))

const env = await getTestEnv()
const admin = adminClient(env, env.server)
await installAppServiceCrd(admin)

async function runOnce(mode: (typeof MODES)[number]): Promise<void> {
  const ns = await env.createNamespace('bench-tracing')
  const op = await startOperator('bench', [...benchRunArgs(env.kubeconfig, ns), ...mode.args], 60_000, {
    env: mode.env,
  })
  await op.waitForLog((l) => l.msg === 'caches synced')
  const apps = admin.resource(APPSERVICES, ns)
  const cpu0 = await cpuMs(op.child.pid!)
  const t0 = performance.now()
  await createAppServices(apps, COUNT, { image: 'nginx:1.27', replicas: 0, port: 80 })
  for (;;) {
    let reconciled = 0
    for await (const page of apps.listPages({ limit: 500 }))
      for (const a of page.items) if (a.status?.observedGeneration === a.metadata.generation) reconciled++
    if (reconciled === COUNT) break
    await new Promise((r) => setTimeout(r, 250))
  }
  const secs = (performance.now() - t0) / 1000
  const cpu = (await cpuMs(op.child.pid!)) - cpu0
  mode.secs.push(secs)
  mode.cpu.push(cpu)
  mode.dropped += (await op.metric('edgeop_tracing_spans_dropped_total', { reason: 'queue_full' })) ?? 0
  op.kill('SIGTERM')
  await op.exited
  process.stderr.write(`${mode.name}: ${secs.toFixed(1)} s, ${cpu} ms CPU\n`)
}

for (let round = 0; round < ROUNDS; round++)
  for (let k = 0; k < MODES.length; k++) await runOnce(MODES[(round + k) % MODES.length]!)

const traces = await jaeger.traces(SERVICE)
const reconcileSpans = traces
  .flatMap((t) => t.spans)
  .filter((s) => s.operationName === 'reconcile appservice').length
const spans = traces.reduce((n, t) => n + t.spans.length, 0)
await jaeger.stop()
await admin.close()

const rows = MODES.map((m) => {
  const secs = median(m.secs)
  const cpu = median(m.cpu)
  return `| ${m.name} | ${secs.toFixed(1)} s | ${(COUNT / secs).toFixed(0)}/s | ${(cpu / 1000).toFixed(2)} s | ${(cpu / COUNT).toFixed(2)} ms | ${m.dropped} |`
})
process.stdout.write(
  `\n| ${COUNT} AppServices created → all reconciled (${new Date().toISOString().slice(0, 10)}, ${process.version}, median of ${ROUNDS}) | wall | rate | operator CPU | CPU per AppService | spans dropped |\n| --- | --- | --- | --- | --- | --- |\n${rows.join('\n')}\n\nJaeger received ${spans} spans of ${SERVICE}, ${reconcileSpans} of them reconcile spans (all from the sampling-1 runs).\n`,
)
process.exit(0)
