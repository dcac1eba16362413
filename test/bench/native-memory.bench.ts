/**
 * @module native-memory.bench — where the memory outside the JS heap goes when a list is cached, layer by layer.
 *
 *   node test/bench/native-memory.bench.ts [objects]     (default 5,000 Pods of the bench's shape, about 2.4 KB)
 *
 * A script, not a test: nothing here is asserted. A server child serves one JSON list of `objects` objects
 * over plain HTTP/1.1 and over HTTP/2 with TLS. Each row is a fresh client child (`--expose-gc`, plus the
 * row's V8 flags) that reads the list through one layer, keeps every object as a compact store stub (bytes
 * copied into one-byte strings, as the client's keepBytes lists do) and, after two full GCs, reports the
 * growth over its own start of RSS, of its anonymous pages (/proc/self/smaps_rollup), and of V8's heap
 * (used and committed), external and ArrayBuffer memory, per object. "other" is RSS growth minus heap
 * committed and ArrayBuffers: malloc (TLS, nghttp2, freed chunks it did not give back) and code.
 * Flags: none, `--optimize-for-size`, `--max-semi-space-size=1` on the command line, and the same set at run
 * time by `v8.setFlagsFromString` (a `v8:` row), as a library could do without a command-line flag.
 * Layers: `memory` (the body built in the child and cut into 16 KB chunks, no network), `http1` (node:http),
 * `h2 tls` (undici's HTTP/2 pool over TLS, as edgeop's client), `h2 tls, closed` (the same, the pool closed
 * once the list is read).
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer as createH1 } from 'node:http'
import { createSecureServer } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { CompactIndexer } from '../../src/cache/compact-indexer.ts'
import { decodeListBytes } from '../../src/codec/json-stubs.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { selfSignedCertificate } from '../../src/tls/self-signed-cert.ts'
import { Pool, request } from '../../src/transport/undici.ts'
import { podSpec } from './lib/pods.ts'

const SELF = fileURLToPath(import.meta.url)
const LAYERS = ['memory', 'http1', 'h2 tls', 'h2 tls, closed'] as const
/** V8 flags on the command line; `v8:` ones set by the child with v8.setFlagsFromString before it reads. */
const FLAGS: readonly (readonly string[])[] = [
  [],
  ['--optimize-for-size'],
  ['--max-semi-space-size=1'],
  ['v8:--max-semi-space-size=1'],
]

function listBody(n: number): Buffer {
  const items = Array.from({ length: n }, (_, i) => podSpec('ns', i))
  return Buffer.from(
    JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items }),
  )
}

/** Anonymous and RSS kB from /proc/self/smaps_rollup. */
function smaps(): { rss: number; anon: number } {
  const t = readFileSync('/proc/self/smaps_rollup', 'utf8')
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(t)?.[1] ?? 0) * 1024
  return { rss: kb('Rss'), anon: kb('Anonymous') }
}

function snapshot() {
  globalThis.gc!()
  globalThis.gc!()
  const m = process.memoryUsage()
  return {
    ...smaps(),
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
  }
}

async function readBody(layer: string, url: string): Promise<{ body: Buffer; close: () => Promise<void> }> {
  if (layer === 'memory') {
    const whole = listBody(Number(url))
    const chunks: Buffer[] = []
    for (let i = 0; i < whole.length; i += 16_384) chunks.push(Buffer.from(whole.subarray(i, i + 16_384)))
    return { body: Buffer.concat(chunks), close: async () => {} }
  }
  if (layer === 'http1') {
    const { get } = await import('node:http')
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) =>
      get(url, resolve).on('error', reject),
    )
    const chunks: Buffer[] = []
    for await (const c of res) chunks.push(c as Buffer)
    return { body: Buffer.concat(chunks), close: async () => {} }
  }
  const pool = new Pool(url, { allowH2: true, connect: { rejectUnauthorized: false } })
  const res = await request(pool, { path: '/list', method: 'GET' })
  const chunks: Buffer[] = []
  for await (const c of res.body) chunks.push(c as Buffer)
  return { body: Buffer.concat(chunks), close: () => pool.close() }
}

async function child(layer: string, url: string, runtimeFlag: string): Promise<void> {
  if (runtimeFlag) (await import('node:v8')).setFlagsFromString(runtimeFlag)
  const before = snapshot()
  const store = new CompactIndexer()
  const cpu = process.cpuUsage()
  const { close } = await fill(store, layer, url)
  const used = process.cpuUsage(cpu)
  if (layer.endsWith('closed')) await close()
  await new Promise((r) => setTimeout(r, 200))
  const after = snapshot()
  const d = Object.fromEntries(
    Object.entries(after).map(([k, v]) => [k, v - before[k as keyof typeof before]]),
  )
  process.stdout.write(JSON.stringify({ objects: store.size, ...d, cpuMs: (used.user + used.system) / 1000 }))
  process.exit(0)
}

/** Reads the list into `store`; the body is garbage once this returns. */
async function fill(store: CompactIndexer, layer: string, url: string) {
  const { body, close } = await readBody(layer, url)
  for (const o of decodeListBytes<KubeObject>(body).items) store.upsert(o)
  return { close }
}

async function run(args: string[]): Promise<Record<string, number>> {
  const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  p.stdout.on('data', (c) => {
    out += c
  })
  await new Promise((r) => p.on('close', r))
  return JSON.parse(out) as Record<string, number>
}

async function parent(n: number): Promise<void> {
  const body = listBody(n)
  const serve = (res: { setHeader(k: string, v: string): void; end(b: Buffer): void }) => {
    res.setHeader('content-type', 'application/json')
    res.end(body)
  }
  // The server lives in this process; every measured client is a child of its own.
  const h1 = createH1((_, res) => serve(res)).listen(0, '127.0.0.1')
  const pair = selfSignedCertificate()
  const h2 = createSecureServer({ ...pair, allowHTTP1: false }, (_, res) => serve(res)).listen(0, '127.0.0.1')
  await Promise.all([h1, h2].map((s) => new Promise((r) => s.once('listening', r))))
  const url = (layer: string) =>
    layer === 'memory'
      ? String(n)
      : layer === 'http1'
        ? `http://127.0.0.1:${(h1.address() as AddressInfo).port}/list`
        : `https://127.0.0.1:${(h2.address() as AddressInfo).port}`
  const kb = (v: number) => (v / n / 1024).toFixed(1).padStart(6)
  process.stdout.write(
    `${n} objects, ${(body.length / n / 1024).toFixed(1)} KB of JSON each; KB per object of growth after two GCs\n` +
      '| layer | flags | RSS | anon | heap used | heap committed | external | ArrayBuffers | other | CPU ms to fill |\n' +
      '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n',
  )
  for (const flags of FLAGS)
    for (const layer of LAYERS) {
      const cli = flags.filter((f) => !f.startsWith('v8:'))
      const runtime = flags.find((f) => f.startsWith('v8:'))?.slice(3) ?? ''
      const r = await run([...cli, '--expose-gc', SELF, 'child', layer, url(layer), runtime])
      const other = r.rss! - r.heapTotal! - r.arrayBuffers!
      process.stdout.write(
        `| ${layer} | ${flags.join(' ') || '(none)'} | ${kb(r.rss!)} | ${kb(r.anon!)} | ${kb(r.heapUsed!)} | ${kb(r.heapTotal!)} | ${kb(r.external!)} | ${kb(r.arrayBuffers!)} | ${kb(other)} | ${r.cpuMs!.toFixed(0)} |\n`,
      )
    }
  h1.close()
  h2.close()
}

if (process.argv[2] === 'child') await child(process.argv[3]!, process.argv[4]!, process.argv[5] ?? '')
else await parent(Number(process.argv[2] ?? 5_000))
