/**
 * @module base-rss.bench — the resident memory of a process that imports edgeop and builds a client, before
 * any request: per public entry of the built library (dist/lib, as a user of the npm package imports it).
 *
 *   node test/bench/base-rss.bench.ts [--runs 5] [--dist dist/lib] [--entries index,client] [--flags="--a --b"]
 *   node test/bench/base-rss.bench.ts --dist /tmp/before/lib,dist/lib --entries index,client   (interleaved)
 *   node test/bench/base-rss.bench.ts --attribute [--entries index,client]   (what each layer costs)
 *   node test/bench/base-rss.bench.ts --heap [--entries index,client]        (heap snapshot by type and name)
 *   node test/bench/base-rss.bench.ts --json                                    (every sample, as JSON)
 *
 * A script, not a test: nothing here is asserted. Needs `npm run build` (or `node build/build.ts --library`).
 * Every sample is a fresh `node` child (this Node, plus `--flags`) running a small ESM program that imports
 * the row's files, optionally builds a `KubeClient` (no request is sent), and reports RSS, anonymous and
 * file-backed RSS (/proc/self/smaps_rollup), V8's heap used and its new space's committed size, and the
 * import's wall time. Rows are interleaved, their order rotated each round; the table gives medians (min–max
 * for RSS). The file-backed part is mostly the pages of the node binary a process has touched (shared
 * with other node processes, but counted in each one's RSS).
 *
 * Rows: an empty Node ESM process; every entry of package.json "exports" imported alone; the root and
 * edgeop/client with a client built from an inline config (`new KubeClient({server, tls, namespace})`) and
 * from a kubeconfig file (`loadClusterConfig({kubeconfig})`, a CA and a token, as a developer's machine has).
 *
 * `--attribute` measures, for each entry of `--entries`, cumulative layers: the Node built-ins the entry's
 * chunks import (taken with `process.getBuiltinModule`, which builds no ESM namespace), then each npm
 * package they import (undici, zod: the specifiers the chunks name), then the entry itself (edgeop's own
 * chunks), then a built client. The difference between two layers is what the later one adds. It also
 * lists the entry's chunks with their bytes and the largest sources in each (esbuild's `// src/…` marks).
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { SUBPATHS } from '../../build/library.ts'
import { selfSignedCertificate } from '../../src/tls/self-signed-cert.ts'
import { median } from './lib/stats.ts'

const ROOT = resolve(import.meta.dirname, '../..')

/** Runs per row: enough for a median on a shared 2-core machine, short enough to stay light (about 0.3 s each). */
const DEFAULT_RUNS = 5

/** What one child does: import `imports` in order (absolute paths or package specifiers), then `client`. */
interface Job {
  readonly imports: readonly string[]
  /** Built-ins taken with process.getBuiltinModule before the imports (attribution layers). */
  readonly builtins?: readonly string[]
  /** Build a KubeClient from the last import's exports (`inline`) or from `kubeconfig` via loadClusterConfig. */
  readonly client?: 'inline' | 'kubeconfig'
  /** Module exporting loadClusterConfig (the root or edgeop/config). */
  readonly configFrom?: string
  readonly kubeconfig?: string
  /** Write a V8 heap snapshot here after measuring (`--heap`). */
  readonly heapSnapshot?: string
}

/** What one child reports, in MB (import time in ms). */
interface Sample {
  readonly rss: number
  readonly anon: number
  readonly file: number
  readonly heapUsed: number
  readonly newSpace: number
  readonly importMs: number
}

interface Row {
  readonly name: string
  readonly job: Job
}

/**
 * The child program. It takes node:fs through process.getBuiltinModule and times with process.hrtime, so
 * the measuring itself loads no module an entry might not (an ESM `import 'node:fs'` or `performance`
 * would).
 */
const CHILD = `
const job = JSON.parse(process.argv[2])
const fs = process.getBuiltinModule('node:fs')
const v8 = process.getBuiltinModule('node:v8')
for (const b of job.builtins ?? []) process.getBuiltinModule(b)
const t0 = process.hrtime.bigint()
let ns = {}
for (const spec of job.imports) ns = await import(spec.startsWith('/') ? 'file://' + spec : spec)
const importMs = Number(process.hrtime.bigint() - t0) / 1e6
if (job.client === 'inline') {
  new ns.KubeClient({ server: 'https://127.0.0.1:6443', tls: { insecureSkipVerify: false }, namespace: 'default', source: 'bench' })
} else if (job.client === 'kubeconfig') {
  const { loadClusterConfig } = await import('file://' + job.configFrom)
  new ns.KubeClient(await loadClusterConfig({ kubeconfig: job.kubeconfig, env: {} }))
}
const t = fs.readFileSync('/proc/self/smaps_rollup', 'utf8')
const mb = (k) => Number(new RegExp('^' + k + ':\\\\s+(\\\\d+) kB', 'm').exec(t)[1]) / 1024
const rss = mb('Rss')
const anon = mb('Anonymous')
const newSpace = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576
process.stdout.write(JSON.stringify({ rss, anon, file: rss - anon, heapUsed: process.memoryUsage().heapUsed / 1048576, newSpace, importMs }))
if (job.heapSnapshot) v8.writeHeapSnapshot(job.heapSnapshot)
`

function runChild(childFile: string, job: Job, flags: readonly string[]): Promise<Sample> {
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, [...flags, childFile, JSON.stringify(job)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: ROOT,
    })
    let out = ''
    let err = ''
    p.stdout.on('data', (c: Buffer) => {
      out += c
    })
    p.stderr.on('data', (c: Buffer) => {
      err += c
    })
    p.on('error', fail)
    p.on('close', (code) => {
      if (code === 0) done(JSON.parse(out) as Sample)
      else fail(new Error(`child exited ${code} for ${JSON.stringify(job.imports)}: ${err.slice(0, 2000)}`))
    })
  })
}

/** Runs every row `runs` times, interleaved, the order rotated each round. */
async function measure(
  rows: readonly Row[],
  runs: number,
  childFile: string,
  flags: readonly string[],
): Promise<Map<string, Sample[]>> {
  const samples = new Map<string, Sample[]>(rows.map((r) => [r.name, []]))
  for (let round = 0; round < runs; round++) {
    for (let i = 0; i < rows.length; i++) {
      const row = rows[(i + round) % rows.length]!
      samples.get(row.name)!.push(await runChild(childFile, row.job, flags))
    }
  }
  return samples
}

const f1 = (n: number): string => n.toFixed(1)

function table(rows: readonly Row[], samples: Map<string, Sample[]>, base?: string): string {
  const baseRss = base && base !== 'previous' ? median(samples.get(base)!.map((s) => s.rss)) : undefined
  const lines = [
    `| row | RSS MB (min–max) | ${base ? 'Δ RSS | ' : ''}anon MB | file MB | heap used MB | new space MB | import ms |`,
    `|---|---:|${base ? '---:|' : ''}---:|---:|---:|---:|---:|`,
  ]
  let previous: number | undefined
  for (const row of rows) {
    const s = samples.get(row.name)!
    const m = (k: keyof Sample) => median(s.map((x) => x[k]))
    const rss = m('rss')
    const delta = base === 'previous' ? (previous === undefined ? 0 : rss - previous) : rss - (baseRss ?? 0)
    previous = rss
    const range = `${f1(Math.min(...s.map((x) => x.rss)))}–${f1(Math.max(...s.map((x) => x.rss)))}`
    lines.push(
      `| ${row.name} | ${f1(rss)} (${range}) | ${base ? `${delta >= 0 ? '+' : ''}${f1(delta)} | ` : ''}${f1(m('anon'))} | ${f1(m('file'))} | ${f1(m('heapUsed'))} | ${f1(m('newSpace'))} | ${m('importMs').toFixed(0)} |`,
    )
  }
  return lines.join('\n')
}

/** A kubeconfig as a developer's machine has one: a CA, a token, one context. */
function writeKubeconfig(dir: string): string {
  const ca = Buffer.from(selfSignedCertificate(['127.0.0.1']).cert).toString('base64')
  const file = join(dir, 'kubeconfig')
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: bench',
      'clusters:',
      '- name: bench',
      '  cluster:',
      '    server: https://127.0.0.1:6443',
      `    certificate-authority-data: ${ca}`,
      'users:',
      '- name: bench',
      '  user:',
      '    token: bench-token-not-a-secret',
      'contexts:',
      '- name: bench',
      '  context: {cluster: bench, user: bench, namespace: default}',
      '',
    ].join('\n'),
  )
  return file
}

/** Relative chunk imports and external specifiers of one built file (esbuild's ESM output). */
function importsOf(file: string): { chunks: string[]; external: string[] } {
  const text = readFileSync(file, 'utf8')
  const chunks: string[] = []
  const external: string[] = []
  for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s*"([^"]+)";|^import\s*"([^"]+)";/gms)) {
    const spec = (m[1] ?? m[2])!
    if (spec.startsWith('.')) chunks.push(resolve(dirname(file), spec))
    else external.push(spec)
  }
  return { chunks, external }
}

/** Every file an entry loads statically, in first-seen order, and the external specifiers they import. */
function entryFiles(entryFile: string): { files: string[]; external: string[] } {
  const files: string[] = []
  const external = new Set<string>()
  const pending = [entryFile]
  for (let f = pending.shift(); f !== undefined; f = pending.shift()) {
    if (files.includes(f)) continue
    files.push(f)
    const i = importsOf(f)
    for (const e of i.external) external.add(e)
    pending.push(...i.chunks)
  }
  return { files, external: [...external] }
}

/** The largest `// src/…` sections of a built file, by bytes. */
function sourcesOf(file: string): { source: string; bytes: number }[] {
  const text = readFileSync(file, 'utf8')
  const marks = [...text.matchAll(/^\/\/ (src\/\S+)$/gm)]
  return marks
    .map((m, i) => ({ source: m[1]!, bytes: (marks[i + 1]?.index ?? text.length) - m.index! }))
    .sort((a, b) => b.bytes - a.bytes)
}

const packageOf = (spec: string): string =>
  spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!

function attributionRows(entry: string, dist: string, kubeconfig: string): Row[] {
  const entryFile = join(dist, `${entry}.js`)
  const { external } = entryFiles(entryFile)
  const builtins = external.filter((s) => s.startsWith('node:'))
  const npm = external.filter((s) => !s.startsWith('node:'))
  const packages = [...new Set(npm.map(packageOf))]
  const rows: Row[] = [{ name: `${entry}: empty node`, job: { imports: [] } }]
  rows.push({ name: `${entry}: + built-ins (${builtins.length})`, job: { imports: [], builtins } })
  const imported: string[] = []
  for (const pkg of packages) {
    imported.push(...npm.filter((s) => packageOf(s) === pkg))
    rows.push({ name: `${entry}: + ${pkg}`, job: { imports: [...imported], builtins } })
  }
  rows.push({ name: `${entry}: + edgeop (the entry)`, job: { imports: [...imported, entryFile], builtins } })
  if (entry === 'index' || entry === 'client')
    rows.push({
      name: `${entry}: + loadClusterConfig, KubeClient`,
      job: {
        imports: [...imported, entryFile],
        builtins,
        client: 'kubeconfig',
        configFrom: join(dist, entry === 'index' ? 'index.js' : 'config.js'),
        kubeconfig,
      },
    })
  return rows
}

function chunkReport(entry: string, dist: string): string {
  const { files, external } = entryFiles(join(dist, `${entry}.js`))
  const lines = [
    `${entry}: ${files.length} files, ${files.reduce((n, f) => n + readFileSync(f).length, 0)} bytes; imports ${external.join(', ')}`,
  ]
  const bySize = files.map((f) => ({ f, bytes: readFileSync(f).length })).sort((a, b) => b.bytes - a.bytes)
  for (const { f, bytes } of bySize.slice(0, 12)) {
    const top = sourcesOf(f)
      .slice(0, 4)
      .map((s) => `${s.source} ${s.bytes}`)
      .join(', ')
    lines.push(`  ${relative(dist, f).padEnd(28)} ${String(bytes).padStart(7)}  ${top}`)
  }
  return lines.join('\n')
}

/** A V8 heap snapshot's shape: flat node records described by its meta. */
interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }
  nodes: number[]
  strings: string[]
}

/**
 * Self sizes of a heap snapshot summed by node type, and by constructor (or code kind) within the largest
 * types: where the heap of an imported entry goes (compiled code, source strings, closures, schemas).
 */
function heapSummary(file: string, top = 12): string {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshot
  const fields = snap.snapshot.meta.node_fields
  const types = snap.snapshot.meta.node_types[0]
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ]
  const byType = new Map<string, number>()
  const byName = new Map<string, number>()
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + typeAt]!]!
    const size = snap.nodes[i + sizeAt]!
    byType.set(type, (byType.get(type) ?? 0) + size)
    const name = `${type}: ${(snap.strings[snap.nodes[i + nameAt]!] ?? '').slice(0, 40)}`
    if (type === 'object' || type === 'closure' || type === 'code' || type === 'array' || type === 'hidden')
      byName.set(name, (byName.get(name) ?? 0) + size)
  }
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`
  const list = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `  ${k.padEnd(50)} ${kb(v).padStart(9)}`)
      .join('\n')
  const total = [...byType.values()].reduce((a, b) => a + b, 0)
  return `heap snapshot: ${kb(total)} in all\nby type:\n${list(byType, 10)}\nlargest names:\n${list(byName, top)}`
}

function mainRows(entries: readonly string[], dist: string, kubeconfig: string): Row[] {
  const rows: Row[] = [{ name: 'node (empty ESM process)', job: { imports: [] } }]
  for (const entry of entries) {
    const file = join(dist, `${entry}.js`)
    rows.push({ name: entry === 'index' ? 'edgeop' : `edgeop/${entry}`, job: { imports: [file] } })
    if (entry !== 'index' && entry !== 'client') continue
    const name = entry === 'index' ? 'edgeop' : 'edgeop/client'
    rows.push({ name: `${name} + KubeClient (inline config)`, job: { imports: [file], client: 'inline' } })
    rows.push({
      name: `${name} + loadClusterConfig + KubeClient (kubeconfig)`,
      job: {
        imports: [file],
        client: 'kubeconfig',
        configFrom: join(dist, entry === 'index' ? 'index.js' : 'config.js'),
        kubeconfig,
      },
    })
  }
  return rows
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: String(DEFAULT_RUNS) },
      dist: { type: 'string', default: 'dist/lib' },
      entries: { type: 'string' },
      flags: { type: 'string', default: '' },
      attribute: { type: 'boolean', default: false },
      heap: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  })
  if (values.help) {
    process.stdout.write(`${readFileSync(import.meta.filename, 'utf8').split('*/')[0]}*/\n`)
    return
  }
  const dists = values.dist.split(',').map((d) => resolve(ROOT, d))
  const dist = dists[0]!
  const runs = Number(values.runs)
  const flags = values.flags.split(' ').filter(Boolean)
  const all = ['index', ...SUBPATHS]
  const entries = values.entries?.split(',') ?? (values.attribute ? ['index', 'client'] : all)
  const dir = mkdtempSync(join(tmpdir(), 'edgeop-base-rss-'))
  // The child lives below the repository's node_modules so that the npm specifiers of an attribution layer
  // (`zod/mini`, `undici/lib/…`) resolve to the packages dist/lib itself resolves.
  const childDir = join(ROOT, 'node_modules/.cache/edgeop-base-rss')
  mkdirSync(childDir, { recursive: true })
  const childFile = join(childDir, `child-${process.pid}.mjs`)
  try {
    writeFileSync(childFile, CHILD)
    const kubeconfig = writeKubeconfig(dir)
    const header = `Node ${process.version}${flags.length ? ` ${flags.join(' ')}` : ''}, ${dists.map((d) => relative(ROOT, d)).join(' and ')}, ${runs} runs per row, medians`
    if (values.heap) {
      // One child per entry, the last attribution layer (entry and client), with a heap snapshot.
      for (const entry of entries) {
        const rows = attributionRows(entry, dist, kubeconfig)
        const heapSnapshot = join(dir, `${entry}.heapsnapshot`)
        const sample = await runChild(childFile, { ...rows.at(-1)!.job, heapSnapshot }, flags)
        process.stdout.write(
          `\n## ${entry} (${rows.at(-1)!.name}): RSS ${f1(sample.rss)} MB, heap used ${f1(sample.heapUsed)} MB\n${heapSummary(heapSnapshot)}\n`,
        )
      }
      return
    }
    if (values.attribute) {
      for (const entry of entries) {
        const rows = attributionRows(entry, dist, kubeconfig)
        const samples = await measure(rows, runs, childFile, flags)
        if (values.json) process.stdout.write(`${JSON.stringify(Object.fromEntries(samples))}\n`)
        else
          process.stdout.write(
            `\n## ${entry}: layers (${header}; Δ is over the row above)\n\n${table(rows, samples, 'previous')}\n\n${chunkReport(entry, dist)}\n`,
          )
      }
      return
    }
    // Several --dist folders (before and after a change): their rows interleave in the same rounds.
    const rows = dists.flatMap((d) =>
      mainRows(entries, d, kubeconfig).map((r) =>
        dists.length > 1 ? { ...r, name: `${relative(ROOT, d) || '.'}: ${r.name}` } : r,
      ),
    )
    const samples = await measure(rows, runs, childFile, flags)
    if (values.json) process.stdout.write(`${JSON.stringify(Object.fromEntries(samples))}\n`)
    else
      process.stdout.write(
        `## Base RSS (${header}; Δ is over the empty process)\n\n${table(rows, samples, rows[0]!.name)}\n`,
      )
  } finally {
    rmSync(dir, { recursive: true, force: true })
    rmSync(childFile, { force: true })
  }
}

await main()
