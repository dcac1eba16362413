/**
 * @module queue.bench — work queue throughput and memory after a burst, printed as Markdown.
 *
 *   node test/bench/queue.bench.ts [cycles]        (default 2,000,000 cycles per throughput row)
 *   taskset -c 0 node test/bench/queue.bench.ts    (pin to one core)
 *
 * A script, not a test: nothing here is asserted. Throughput rows are the median of 5 runs after a
 * warm-up run; memory rows are heapUsed after full GCs, with the keys allocated before the baseline
 * (so the numbers are the queue's own structures, not the key strings).
 */
import { cpus } from 'node:os'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { ManualClock } from '../../src/core/clock.ts'
import {
  createDelayingQueue,
  createRateLimitingQueue,
  createWorkQueue,
  itemExponentialRateLimiter,
  type QueueMetrics,
  type WorkQueue,
} from '../../src/queue/index.ts'

const CYCLES = Number(process.argv[2] ?? 2_000_000)
const RUNS = 5
const WORKING_SET = 100_000
const BURST = 1_000_000

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const makeKeys = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => `namespace-${i % 97}/object-${i}`)
const workingSet = makeKeys(WORKING_SET)
const key = (i: number): string => workingSet[i % WORKING_SET] as string

/** A sink that only counts: the cost of the hooks themselves. */
class CountingSink implements QueueMetrics {
  calls = 0
  incDepth(): void {
    this.calls++
  }
  decDepth(): void {
    this.calls++
  }
  incAdds(): void {
    this.calls++
  }
  incRetries(): void {
    this.calls++
  }
  observeQueueDuration(): void {
    this.calls++
  }
  observeWorkDuration(): void {
    this.calls++
  }
  setInFlightProbe(): void {}
}

/** One worker at a time: add → await get → done. The item is ready when get is called. */
async function serial(q: WorkQueue<string>, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    q.add(key(i))
    const next = await q.get()
    if (!next.shutdown) q.done(next.item)
  }
}

/** Add 1,000, then get+done 1,000. */
async function batched(q: WorkQueue<string>, n: number): Promise<void> {
  const batch = 1000
  for (let i = 0; i < n; i += batch) {
    for (let j = 0; j < batch; j++) q.add(key(i + j))
    for (let j = 0; j < batch; j++) {
      const next = await q.get()
      if (!next.shutdown) q.done(next.item)
    }
  }
}

/** A worker already waiting in get; each add hands the item straight to it. */
async function handOff(q: WorkQueue<string>, n: number): Promise<void> {
  let left = n
  const worker = (async () => {
    while (left > 0) {
      const next = await q.get()
      if (next.shutdown) return
      q.done(next.item)
      left--
    }
  })()
  for (let i = 0; i < n; i++) {
    q.add(key(i))
    await null
  }
  await worker
}

/** addAfter with 1–1000 ms delays, the clock stepped over them, then drained. */
async function delayed(n: number): Promise<void> {
  const clock = new ManualClock()
  const q = createDelayingQueue<string>({ clock })
  const batch = 10_000
  for (let i = 0; i < n; i += batch) {
    for (let j = 0; j < batch; j++) q.addAfter(key(i + j), 1 + ((i + j) % 1000))
    await clock.advance(1000)
    while (q.len() > 0) {
      const next = await q.get()
      if (!next.shutdown) q.done(next.item)
    }
  }
  q.shutDown()
}

/** addRateLimited (per-item exponential 1 ms → 1 ms), drained with forget. */
async function rateLimited(n: number): Promise<void> {
  const clock = new ManualClock()
  const q = createRateLimitingQueue<string>({
    clock,
    rateLimiter: itemExponentialRateLimiter({ baseMs: 1, maxMs: 1 }),
  })
  const batch = 10_000
  for (let i = 0; i < n; i += batch) {
    for (let j = 0; j < batch; j++) q.addRateLimited(key(i + j))
    await clock.advance(1)
    while (q.len() > 0) {
      const next = await q.get()
      if (next.shutdown) break
      q.forget(next.item)
      q.done(next.item)
    }
  }
  q.shutDown()
}

async function measure(run: (n: number) => Promise<void>, n: number): Promise<number> {
  await run(Math.min(n, 200_000)) // warm-up
  const rates: number[] = []
  for (let r = 0; r < RUNS; r++) {
    gc()
    const t0 = performance.now()
    await run(n)
    rates.push(n / ((performance.now() - t0) / 1000))
  }
  rates.sort((a, b) => a - b)
  return rates[Math.floor(RUNS / 2)] as number
}

function settledHeap(): number {
  for (let i = 0; i < 4; i++) gc()
  return process.memoryUsage().heapUsed
}

const fmtRate = (r: number): string => `${(r / 1e6).toFixed(2)} M/s`
const fmtNs = (r: number): string => `${(1e9 / r).toFixed(0)} ns`
const fmtMb = (b: number): string => `${(b / 1024 / 1024).toFixed(2)} MB`

const rows: [string, number][] = [
  [
    'add → get → done, serial (work queue)',
    await measure((n) => serial(createWorkQueue<string>(), n), CYCLES),
  ],
  ['add → get → done, batches of 1,000', await measure((n) => batched(createWorkQueue<string>(), n), CYCLES)],
  [
    'add → hand-off to a waiting worker → done',
    await measure((n) => handOff(createWorkQueue<string>(), n), CYCLES),
  ],
  [
    'add → get → done, serial, with a metrics sink',
    await measure((n) => serial(createWorkQueue<string>({ metrics: new CountingSink() }), n), CYCLES),
  ],
  [
    'add → get → done, serial (rate-limiting queue)',
    await measure((n) => serial(createRateLimitingQueue<string>({ clock: new ManualClock() }), n), CYCLES),
  ],
  ['addAfter → timer → get → done (manual clock)', await measure(delayed, CYCLES / 4)],
  ['addRateLimited → get → forget → done', await measure(rateLimited, CYCLES / 4)],
]

/** Memory: fill with BURST distinct keys, measure while held and after draining. */
async function burstMemory(
  keys: string[],
  path: 'add' | 'addAfter',
): Promise<{ held: number; after: number; baseline: number }> {
  const clock = new ManualClock()
  const q = createDelayingQueue<string>({ clock })
  const baseline = settledHeap()
  for (let i = 0; i < BURST; i++) {
    if (path === 'add') q.add(keys[i] as string)
    else q.addAfter(keys[i] as string, 1 + (i % 1000))
  }
  const held = settledHeap()
  await clock.advance(1000)
  while (q.len() > 0) {
    const next = await q.get()
    if (!next.shutdown) q.done(next.item)
  }
  const after = settledHeap()
  q.shutDown()
  return { held, after, baseline }
}

const burstKeys = makeKeys(BURST)
const memory = [
  ['add × 1,000,000, then get+done all', await burstMemory(burstKeys, 'add')],
  ['addAfter × 1,000,000, then fire, get+done all', await burstMemory(burstKeys, 'addAfter')],
] as const

const cpu = cpus()[0]?.model ?? 'unknown CPU'
const out: string[] = [
  `### edgeop queue benchmark — Node ${process.version}, ${process.arch}, ${cpu}`,
  '',
  `String keys (working set ${WORKING_SET.toLocaleString('en')}), one thread, median of ${RUNS} runs.`,
  '',
  '| cycle | throughput | per cycle |',
  '|---|---:|---:|',
  ...rows.map(([name, rate]) => `| ${name} | ${fmtRate(rate)} | ${fmtNs(rate)} |`),
  '',
  `Memory after a burst of ${BURST.toLocaleString('en')} distinct keys (heapUsed after GC; keys allocated beforehand).`,
  '',
  '| burst | baseline | held at peak | per queued key | after drain | retained |',
  '|---|---:|---:|---:|---:|---:|',
  ...memory.map(
    ([name, m]) =>
      `| ${name} | ${fmtMb(m.baseline)} | ${fmtMb(m.held)} | ${((m.held - m.baseline) / BURST).toFixed(0)} B | ${fmtMb(m.after)} | ${((m.after - m.baseline) / 1024).toFixed(0)} KB |`,
  ),
]
process.stdout.write(`${out.join('\n')}\n`)
