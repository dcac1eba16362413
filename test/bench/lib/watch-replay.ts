/**
 * @module watch-replay — workload 2: watch events decoded per CPU-second, on a recorded stream replayed
 * by a local server at full speed in each wire format (lib/replay.ts), with no apiserver in the loop.
 */
import { CORE_TYPES } from '../../../src/client/resource.ts'
import { STAMP_ANNOTATION } from '../peers/protocol.ts'
import { PeerProcess } from './peers.ts'
import { type Recordings, type ReplayServer, recordWatch } from './replay.ts'
import type { WorkloadReport } from './report.ts'
import type { Sample } from './stats.ts'
import { handlerRuns, informerRuns } from './variants.ts'
import { WIRE_LABEL, type Wire } from './wire.ts'
import { attempt, baseRow, type Ctx, rotated } from './workloads.ts'

/** Records the namespace's watch once per run (both formats); see lib/replay.ts. */
export async function recordReplay(ctx: Ctx, namespace: string, events: number): Promise<Recordings> {
  const pods = ctx.client.resource(CORE_TYPES.pods, namespace)
  const names = ((await pods.listMetadata()).items ?? []).map((p) => p.metadata.name as string)
  const stamp = Date.now()
  return recordWatch(
    ctx.target,
    namespace,
    events,
    async (i) => {
      await pods.patch(
        names[i % names.length] as string,
        { metadata: { annotations: { [STAMP_ANNOTATION]: `${stamp}-${i}` } } },
        'merge',
      )
    },
    ctx.log,
  )
}

export async function watchReplay(
  ctx: Ctx,
  opts: { namespace: string; recordings: Recordings; server: ReplayServer },
): Promise<WorkloadReport> {
  const samples: Sample[] = []
  const notes: string[] = []
  const { recordings: rec, server } = opts
  const events = rec.json.count
  const kubeconfig = await server.kubeconfig()
  const runs = [...informerRuns(ctx.peers, ctx.caps, false), ...handlerRuns(ctx.peers, ctx.caps)]
  for (let round = 0; round < ctx.rounds; round++) {
    for (const { peer, row, job } of rotated(runs, round)) {
      await attempt(notes, `${row}, round ${round + 1}`, async () => {
        server.reset()
        const p = PeerProcess.start(peer, {
          workload: 'replay',
          kubeconfig,
          namespace: opts.namespace,
          expect: events,
          ...job,
        })
        try {
          await p.next('synced', 60_000)
          p.send('go')
          await p.next('armed', 10_000)
          const before = p.sample()
          server.release()
          const result = await p.next('result', 300_000)
          const after = p.sample()
          // The wire format is the one the peer actually asked for, whatever the row says.
          const served = server.served.filter((s) => !s.startsWith('404'))
          const wire: Wire = served.some((s) => s.endsWith('protobuf')) ? 'protobuf' : 'json'
          if (!row.includes(`(${WIRE_LABEL[wire]}`))
            notes.push(`${row}: the peer asked for ${served.join(', ')}; the row's format was not honoured`)
          const cpu = result.cpuSeconds as number
          samples.push({
            case: `${events.toLocaleString('en')} MODIFIED events`,
            peer: peer.id,
            row,
            round,
            metrics: {
              eventsPerCpuSecond: (result.events as number) / cpu,
              cpuMsPer1k: (cpu * 1e6) / (result.events as number),
              wallMs: result.wallMs as number,
              eventsPerSecond: (result.events as number) / ((result.wallMs as number) / 1000),
              driverCpuSeconds: after.cpuSeconds - before.cpuSeconds,
              rssMb: after.rssMb,
            },
          })
        } finally {
          await p.stop()
        }
      })
    }
  }
  const mb = (b: number): string => `${(b / 1e6).toFixed(1)} MB`
  return {
    id: 'watch',
    title: '2. Watch: events decoded per CPU-second (recorded stream, replayed at full speed)',
    method: [
      `Recorded once per run from the real apiserver: two streaming-list watches (JSON \`application/json;stream=watch\` and protobuf \`application/vnd.kubernetes.protobuf;stream=watch\`) on a namespace of ${rec.json.list.length ? 'realistic' : ''} Pods (lib/pods.ts: three writers' managedFields each), then ${events.toLocaleString('en')} merge patches of an annotation, one Pod after another: the same ${events.toLocaleString('en')} MODIFIED events in each format (${mb(rec.json.events.length)} of JSON, ${mb(rec.protobuf.events.length)} of protobuf).`,
      `A local HTTP server (plain HTTP on loopback, no auth) then serves each peer the list or streaming list it asks for in the format its \`Accept\` names, holds its watch until the peer has synced and started its clock on the driver's \`go\`, and writes the recorded events in one go, as fast as the socket takes them. Each peer counts the update events delivered to its handler and reports its own process CPU time (user+system, all threads: Node \`process.cpuUsage\`, Go \`getrusage\`, Rust /proc/self/stat in 10 ms ticks) from \`go\` to the last event. Events per CPU-second = events ÷ that CPU time. Each library runs with its defaults otherwise (edgeop strips managedFields and freezes; the others cache full objects). ${ctx.rounds} rounds, rows interleaved; ratios against ${baseRow(ctx)}.`,
      'No write → handler latency here: the server writes the whole stream at once, so a latency would measure queueing in the socket. The live watch through the apiserver with its latencies is still there as `--only watch-live` (its writer falls behind its schedule on this machine, so its CPU per event measures the writer as much as the peers).',
    ],
    metrics: [
      { key: 'eventsPerCpuSecond', label: 'events per CPU-second', unit: '', better: 'higher' },
      { key: 'cpuMsPer1k', label: 'CPU per 1,000 events', unit: 'ms', better: 'lower' },
      { key: 'wallMs', label: 'wall time, go → last event', unit: 'ms', better: 'lower' },
      { key: 'eventsPerSecond', label: 'events per wall second', unit: '', better: 'higher' },
      {
        key: 'driverCpuSeconds',
        label: 'CPU from /proc (driver view)',
        unit: 's',
        better: 'lower',
        digits: 2,
      },
      { key: 'rssMb', label: 'RSS at end', unit: 'MB', better: 'lower' },
    ],
    chartMetric: 'eventsPerCpuSecond',
    cases: [`${events.toLocaleString('en')} MODIFIED events`],
    baseRow: baseRow(ctx),
    peers: ctx.peers.map((p) => p.id),
    samples,
    notes,
    facts: {
      events,
      jsonEventBytes: rec.json.events.length / events,
      protobufEventBytes: rec.protobuf.events.length / events,
    },
  }
}
