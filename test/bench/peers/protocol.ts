/**
 * @module protocol — the worker side of the benchmark protocol, shared by the TypeScript peers.
 *
 * A peer is started as `node --expose-gc [job.nodeFlags…] peers/<peer>.ts '<job json>'`
 * (lib/peers.ts, nodePeerCommand). It first writes `{"event": "hello", "execArgv": [...]}`, the
 * flags its process received, which the driver checks against the ones it passed (lib/peer-flags.ts),
 * then one JSON object per line on stdout (`{"event": "ready" | "synced" | "settled" | "result", ...}`)
 * and reads commands on stdin (`go`, `stop`); it exits on `stop` or at end of input. The
 * Go and Rust peers (test/bench/go, test/bench/rust) speak the same protocol without `hello` (they
 * take no Node flags). The driver
 * reads CPU time and RSS from /proc/<pid> between messages, the same way for every peer.
 */
import { createInterface } from 'node:readline'

/** A job as the driver sends it. */
export interface Job {
  workload: 'coldstart' | 'memory' | 'watch' | 'replay' | 'list' | 'rawread' | 'version'
  kubeconfig: string
  namespace: string
  /** Objects the namespace holds (informational). */
  expect?: number
  /** `full` (everything cached), `strip` (managedFields dropped), `metadata` (metadata-only, stripped). */
  mode?: 'full' | 'strip' | 'metadata'
  /** Timed list calls after one warm-up. */
  iterations?: number
  /** list, edgeop peer only: a bare undici request + JSON.parse (the floor under any Node client). */
  raw?: boolean
  /**
   * Wire format the informer (and list) should use; unset: the library's default. The edgeop peer
   * passes it as the informer option `wire`, the Go peer sets client-go's content type.
   */
  wire?: 'json' | 'protobuf'
  /** edgeop only: the informer option `store` (`eager` objects or `compact` wire bytes). */
  store?: 'eager' | 'compact'
  /**
   * replay, edgeop only: what the update handler declares it reads. Unset: both objects (the compact
   * store decodes the old and the new one); `new`: `readsOld: 'metadata'` (one decode per event, as
   * client-go's informer decodes each event once); `metadata`: `reads: 'metadata'` (a controller's
   * handler that only enqueues a key: no decode).
   */
  handlerReads?: 'new' | 'metadata'
  /** Node peers: V8/Node flags on the command line before the script (e.g. `--optimize-for-size`). */
  nodeFlags?: string[]
  /** rawread (edgeop peer): a bare reader that only counts bytes, in this format. */
  rawFormat?: 'json' | 'protobuf'
  /** rawread: a streaming list (watch with sendInitialEvents, read up to the bookmark ending it). */
  rawStream?: boolean
}

/** Annotation the writer stamps with its wall clock (Unix microseconds) at write time. */
export const STAMP_ANNOTATION = 'bench.edgeop.dev/written-at'

/** The job in argv[2]; says first which Node flags this process received (the `hello` message). */
export function readJob(): Job {
  emit('hello', { execArgv: process.execArgv })
  const raw = process.argv[2]
  if (raw === undefined) throw new Error('usage: node <peer>.ts <job json>')
  return JSON.parse(raw) as Job
}

/** Writes one protocol message. */
export function emit(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ ...fields, event })}\n`)
}

const lines: string[] = []
const waiters: (() => void)[] = []
let ended = false
const rl = createInterface({ input: process.stdin })
rl.on('line', (line) => {
  lines.push(line.trim())
  waiters.shift()?.()
})
rl.on('close', () => {
  ended = true
  for (const w of waiters.splice(0)) w()
})

/** Waits for the command `want`; false when `stop` or end of input comes first. */
export async function waitFor(want: string): Promise<boolean> {
  for (;;) {
    const line = lines.shift()
    if (line === want) return true
    if (line === 'stop') return false
    if (line === undefined) {
      if (ended) return false
      await new Promise<void>((r) => waiters.push(r))
    }
  }
}

/** Ends the process: stdin is released so nothing keeps the event loop alive. */
export function exit(): never {
  rl.close()
  process.exit(0)
}

const gc = (globalThis as { gc?: () => void }).gc

/** heapUsed after full collections (needs `--expose-gc`). */
export async function settledHeap(): Promise<number> {
  if (gc === undefined) throw new Error('run with --expose-gc')
  for (let i = 0; i < 4; i++) {
    gc()
    await new Promise((r) => setImmediate(r))
  }
  return process.memoryUsage().heapUsed
}

/** Wall clock in Unix microseconds (sub-millisecond, comparable across processes). */
export function nowMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000)
}

/** Latency recorder for the watch workload: one sample per new stamp seen on an object. */
export class LatencyRecorder {
  readonly samples: number[] = []
  readonly #last = new Map<string, string>()

  record(obj: {
    metadata?: { namespace?: string; name?: string; annotations?: Record<string, string> }
  }): void {
    const now = nowMicros()
    const stamp = obj.metadata?.annotations?.[STAMP_ANNOTATION]
    if (stamp === undefined) return
    const key = `${obj.metadata?.namespace}/${obj.metadata?.name}`
    if (this.#last.get(key) === stamp) return
    this.#last.set(key, stamp)
    this.samples.push((now - Number(stamp)) / 1000)
  }
}

/**
 * Counts the events a replay delivers to a handler and times them with the process's own CPU
 * clock (user + system, all threads): {@link arm} on the driver's `go`, {@link hit} in the handler.
 */
export class EventCounter {
  readonly #expect: number
  count = 0
  #cpu0: NodeJS.CpuUsage | undefined
  #t0 = 0
  #done: (r: { events: number; cpuSeconds: number; wallMs: number }) => void = () => {}
  readonly result = new Promise<{ events: number; cpuSeconds: number; wallMs: number }>(
    (r) => (this.#done = r),
  )

  constructor(expect: number) {
    this.#expect = expect
  }

  arm(): void {
    this.count = 0
    this.#cpu0 = process.cpuUsage()
    this.#t0 = performance.now()
  }

  hit(): void {
    if (this.#cpu0 === undefined) return
    if (++this.count !== this.#expect) return
    const cpu = process.cpuUsage(this.#cpu0)
    this.#done({
      events: this.count,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      wallMs: performance.now() - this.#t0,
    })
  }
}

/** Sleeps `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
