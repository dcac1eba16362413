/**
 * @module run — the long fuzz run, by hand: `npm run fuzz -- <target|all> [--runs N | --seconds N] [--seed S]
 * [--slow-ms M] [--out DIR] [--without-known]`.
 *
 * Coverage-guided: each input is a mutation (harness.ts) of the target's pool, which starts as its
 * committed corpus (seeds awaiting a fix included, unless `--without-known`: then a known defect found
 * is found from the other seeds) and grows by every input that ran source text of `src/`
 * no input ran before (coverage.ts). An input that is not answered as documented is a finding, and one
 * slower than `--slow-ms` a slow input; both are written to `<out>/<target>/` (default `.fuzz/`) and
 * counted by their first line; the lines the seeds awaiting a fix produce, and those matching
 * `AWAITING_SIGNATURES`, count as those known defects.
 * Prints one JSON line per target: executions, their rate, source text covered,
 * pool size, known defects hit, new findings. Exit code 1 when anything new was found.
 */
import { createHash } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import fc from 'fast-check'
import { AWAITING_FIXES, AWAITING_SIGNATURES, SLOW_UNTIL_FIXED } from './awaiting-fixes.ts'
import { SourceCoverage } from './coverage.ts'
import { applyMutation, dictionaryBytes, type FuzzTarget, mutation, preview, readCorpus } from './harness.ts'

const ROOT = join(import.meta.dirname, '..', '..')

// Coverage starts before the targets (and edgeop's sources) load, so V8 compiles them with block counters.
const coverage = new SourceCoverage(join(ROOT, 'src'))
await coverage.start()
const { TARGETS } = await import('./targets.ts')
/** An input slower than this is reported: a hundred times a typical input, well under a probe's timeout. */
const DEFAULT_SLOW_MS = 1_000
/** Mutations drawn from fast-check at a time (one fast-check seed each, `--seed` plus the round). */
const SAMPLE = 500
/** Inputs run between two coverage reads. */
const COVERAGE_BATCH = 16

interface Found {
  kind: 'finding' | 'slow'
  count: number
  file: string
  preview: string
}

async function fuzz(
  target: FuzzTarget,
  o: { runs: number; seconds: number; seed: number; slowMs: number; out: string; withoutKnown: boolean },
): Promise<Record<string, unknown>> {
  const seeds = readCorpus(target.name).filter((s) => {
    const id = `${target.name}/${s.file}`
    return !SLOW_UNTIL_FIXED.has(id) && !(o.withoutKnown && id in AWAITING_FIXES)
  })
  const pool = seeds.map((s) => s.bytes)
  const dictionary = dictionaryBytes(target)
  const out = join(o.out, target.name)
  await mkdir(out, { recursive: true })
  const found = new Map<string, Found>()
  /** Finding lines of the seeds awaiting a fix → their defect: the same line again is that defect, not news. */
  const known = new Map<string, { defect: string; count: number }>()
  let defect: string | undefined
  const record = async (kind: Found['kind'], line: string, input: Uint8Array): Promise<void> => {
    const signature = AWAITING_SIGNATURES[target.name]
    const awaited = defect ?? (signature?.[1].test(line) ? signature[0] : undefined)
    if (awaited !== undefined && !known.has(line)) known.set(line, { defect: awaited, count: 0 })
    const k = known.get(line)
    if (k) return void k.count++
    const seen = found.get(line)
    if (seen) return void seen.count++
    const file = join(out, `${kind}-${createHash('sha256').update(input).digest('hex').slice(0, 16)}`)
    await writeFile(file, input)
    found.set(line, { kind, count: 1, file, preview: preview(input, 80) })
    process.stderr.write(`${target.name}: ${kind}: ${line}\n  input ${file}\n`)
  }
  const session = await target.open()
  await coverage.reset()
  const started = performance.now()
  const deadline = o.seconds > 0 ? started + o.seconds * 1000 : Number.POSITIVE_INFINITY
  let execs = 0
  let kept = 0
  let slowest: { ms: number; input: Uint8Array } = { ms: 0, input: new Uint8Array() }
  const one = async (input: Uint8Array): Promise<void> => {
    const t0 = performance.now()
    try {
      await session.run(input)
    } catch (err) {
      await record('finding', (err as Error).message.split('\n')[0]!.slice(0, 300), input)
    }
    const ms = performance.now() - t0
    execs++
    if (ms > slowest.ms) slowest = { ms, input }
    if (ms > o.slowMs) {
      // Once more, so a pause of the shared machine (GC, another process) is not reported as the input's.
      const t1 = performance.now()
      await session.run(input).catch(() => {})
      const again = performance.now() - t1
      if (again > o.slowMs)
        await record('slow', `slower than ${o.slowMs} ms (${Math.round(Math.min(ms, again))} ms)`, input)
    }
  }
  // Coverage is read once per batch of inputs (a read costs about 10 ms, many inputs); only a batch
  // that ran new source text is run again, input by input, to keep the ones that did.
  const batch: Uint8Array[] = []
  const flush = async (): Promise<void> => {
    if (batch.length > 0 && (await coverage.take(false)) > 0) {
      if (process.env.FUZZ_DEBUG) process.stderr.write(`rerun ${batch.length}\n`)
      for (const input of batch) {
        await one(input)
        if ((await coverage.take()) > 0 && !pool.includes(input)) {
          pool.push(input)
          kept++
        }
      }
    }
    batch.length = 0
  }
  for (const s of seeds) {
    defect = AWAITING_FIXES[`${target.name}/${s.file}`]
    await one(s.bytes)
    await coverage.take()
  }
  defect = undefined
  for (let round = 0; execs < o.runs && performance.now() < deadline; round++) {
    for (const m of fc.sample(mutation, { seed: o.seed + round, numRuns: SAMPLE })) {
      if (execs >= o.runs || performance.now() >= deadline) break
      const input = applyMutation(m, pool, dictionary, target.maxBytes)
      await one(input)
      batch.push(input)
      if (batch.length === COVERAGE_BATCH) await flush()
    }
  }
  await flush()
  const seconds = (performance.now() - started) / 1000
  await session.close()
  await writeFile(join(out, 'slowest'), slowest.input)
  const totals = coverage.totals
  return {
    target: target.name,
    execs,
    seconds: Math.round(seconds),
    execsPerSecond: Math.round(execs / seconds),
    coveredChars: totals.covered,
    knownChars: totals.known,
    coveredPercent: totals.known ? Math.round((totals.covered / totals.known) * 1000) / 10 : 0,
    sourceFiles: totals.files,
    slowestMs: Math.round(slowest.ms),
    slowestInput: join(out, 'slowest'),
    seeds: seeds.length,
    kept,
    known: [...known].map(([line, k]) => ({ line, ...k })),
    found: [...found].map(([line, f]) => ({ line, ...f })),
  }
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      runs: { type: 'string' },
      seconds: { type: 'string' },
      seed: { type: 'string', default: '1' },
      'slow-ms': { type: 'string', default: String(DEFAULT_SLOW_MS) },
      out: { type: 'string', default: join(ROOT, '.fuzz') },
      'without-known': { type: 'boolean', default: false },
    },
  })
  const names = positionals[0] === 'all' ? TARGETS.map((t) => t.name) : positionals
  const unknown = names.filter((n) => !TARGETS.some((t) => t.name === n))
  if (
    names.length === 0 ||
    unknown.length > 0 ||
    (values.runs === undefined && values.seconds === undefined)
  ) {
    process.stderr.write(
      `usage: npm run fuzz -- <target…|all> (--runs N | --seconds N) [--seed S] [--slow-ms M] [--out DIR] [--without-known]\n` +
        `targets: ${TARGETS.map((t) => t.name).join(', ')}\n`,
    )
    return 2
  }
  const o = {
    runs: values.runs === undefined ? Number.POSITIVE_INFINITY : Number(values.runs),
    seconds: values.seconds === undefined ? 0 : Number(values.seconds),
    seed: Number(values.seed),
    slowMs: Number(values['slow-ms']),
    out: values.out!,
    withoutKnown: values['without-known']!,
  }
  let anything = false
  for (const name of names) {
    const report = await fuzz(TARGETS.find((t) => t.name === name)!, o)
    if ((report.found as unknown[]).length > 0) anything = true
    process.stdout.write(`${JSON.stringify(report)}\n`)
  }
  await coverage.stop()
  return anything ? 1 : 0
}

process.exitCode = await main()
