/**
 * @module encoding — workload 7: the apiserver's own cost of each wire format, a bound on every client.
 * A bare reader (the edgeop peer process doing a plain undici request whose body it only counts, no
 * decoding) pulls the big namespace's list and its streaming list in JSON and in protobuf, while the
 * driver reads the kube-apiserver's CPU time from /proc/<pid>/stat.
 */
import { PeerProcess } from './peers.ts'
import { sampleProc } from './proc.ts'
import type { WorkloadReport } from './report.ts'
import { median, type Sample } from './stats.ts'
import { WIRE_LABEL, type Wire } from './wire.ts'
import { attempt, type Ctx, rotated, sleep } from './workloads.ts'

/** How long the driver watches the idle apiserver to subtract its background CPU (leases, watch cache). */
const IDLE_SAMPLE_MS = 2000

/** The apiserver's CPU seconds per wall second while nobody is reading (best effort). */
async function idleCpuRate(pid: number): Promise<number> {
  const a = sampleProc(pid)
  const t0 = performance.now()
  await sleep(IDLE_SAMPLE_MS)
  const b = sampleProc(pid)
  if (!a || !b) return 0
  return (b.cpuSeconds - a.cpuSeconds) / ((performance.now() - t0) / 1000)
}

/** Row label of a bare-reader run. */
export const encodingRow = (wire: Wire, stream: boolean): string =>
  `bare reader, ${stream ? 'streaming list' : 'list'} (${WIRE_LABEL[wire]})`

export async function apiserverEncoding(ctx: Ctx, pods: number, iterations: number): Promise<WorkloadReport> {
  const samples: Sample[] = []
  const notes: string[] = []
  const ns = await ctx.podsNamespace(pods)
  const edgeop = ctx.peers.find((p) => p.id === 'edgeop')
  const pid = ctx.apiserverPid
  const c = `${pods.toLocaleString('en')} Pods`
  if (pid === undefined)
    notes.push("The kube-apiserver's pid is not visible to the driver: its CPU time is not measured.")
  const runs = (['json', 'protobuf'] as const).flatMap((wire) =>
    [false, true].map((stream) => ({ wire, stream })),
  )
  for (let round = 0; round < ctx.rounds && edgeop; round++) {
    for (const { wire, stream } of rotated(runs, round)) {
      const row = encodingRow(wire, stream)
      await attempt(notes, `${row}, round ${round + 1}`, async () => {
        const idle = pid === undefined ? 0 : await idleCpuRate(pid)
        const p = PeerProcess.start(edgeop, {
          workload: 'rawread',
          kubeconfig: ctx.kubeconfig,
          namespace: ns,
          iterations,
          rawFormat: wire,
          rawStream: stream,
        })
        try {
          await p.next('ready', 60_000)
          const a = pid === undefined ? undefined : sampleProc(pid)
          const t0 = performance.now()
          const result = await p.next('result', 600_000)
          const wall = (performance.now() - t0) / 1000
          const b = pid === undefined ? undefined : sampleProc(pid)
          const times = result.timesMs as number[]
          const metrics: Record<string, number> = {
            ms: median(times),
            mb: (result.bytes as number) / 1e6,
            objPerSec: pods / (median(times) / 1000),
          }
          // Every request (the warm-up too) made the apiserver encode the whole list once.
          if (a && b)
            metrics.apiserverCpuMs = ((b.cpuSeconds - a.cpuSeconds - idle * wall) * 1000) / (times.length + 1)
          samples.push({ case: c, peer: 'edgeop', row, round, metrics })
        } finally {
          await p.stop()
        }
      })
    }
  }
  return {
    id: 'encoding',
    title: `7. The apiserver's encoding cost per wire format (${c}): a bound on every client`,
    method: [
      `A bare reader (the edgeop peer process with a plain undici request over TLS; the body is only counted, never decoded) requests the namespace's ${c} ${iterations + 1} times per row (one warm-up): as one unpaginated list, and as a streaming list (a watch with \`sendInitialEvents=true\`, read until the bookmark that ends the initial events), each in JSON and in protobuf. "wall time" is the reader's median per request: the wire floor, the time no client of that format can beat on this machine. "apiserver CPU" is the kube-apiserver's user+system time from /proc/<pid>/stat over the whole run, less its idle rate measured for ${IDLE_SAMPLE_MS / 1000} s just before, divided by the requests; it includes TLS and reading from its watch cache or etcd, not only encoding. ${ctx.rounds} rounds, rows interleaved; ratios against the JSON list.`,
      "The apiserver and the reader share the machine's 2 cores, so on JSON the apiserver's encoding time is most of a client's sync: compare list 10,000 Pods in workload 4 and cold start in workload 1.",
    ],
    metrics: [
      { key: 'ms', label: 'wall time (wire floor)', unit: 'ms', better: 'lower' },
      { key: 'apiserverCpuMs', label: 'apiserver CPU per request', unit: 'ms', better: 'lower' },
      { key: 'mb', label: 'bytes on the wire', unit: 'MB', better: 'lower', digits: 1 },
      { key: 'objPerSec', label: 'objects/s', unit: '', better: 'higher' },
    ],
    chartMetric: 'apiserverCpuMs',
    cases: [c],
    baseRow: encodingRow('json', false),
    peers: ['edgeop'],
    samples,
    notes,
  }
}
