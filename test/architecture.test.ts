/**
 * Dependencies point one way: core → config → client → watch → cache → controller → manager,
 * with queue (core only) and leader (core, client) beside them, tracing (core only) below the client, objects (helpers on
 * Kubernetes objects) and metrics health logging server tls (metrics, probes, logging) on client, the reconcile loop
 * logging through observability's default logger, and only the manager depending on leader election; reference operators import only the public entry points. This test reads every import in src/ and fails
 * on any edge the table does not allow, and on any npm import outside its home.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { test } from 'node:test'

const SRC = resolve(import.meta.dirname, '../src')
/** folder → folders it may import from (besides itself). */
const ALLOWED: Record<string, string[]> = {
  core: [],
  config: ['core'],
  // Generated, type-only built-in objects (edgeop/api): a leaf on core.
  api: ['core'],
  // Tracing (spans, W3C propagation, OTLP export) sits on core alone: the client makes its calls
  // children of the active span, so it must be below client, and everything above may use it.
  tracing: ['core'],
  // Protobuf for built-in kinds (generated table, decoder, watch frames): on core alone, below the client.
  // Bytes into objects: the JSON scanner, codecs and stubs, the watch decoder, content negotiation, and
  // protobuf for built-in kinds (codec/protobuf: generated table, decoder, watch frames).
  codec: ['core'],
  // One HTTP exchange and its attempts: pools, dispatchers, auth headers, throttling, retries, API errors.
  transport: ['core', 'config', 'tracing', 'codec', '.'],
  // The API: kube client, resource clients, resource types, discovery.
  client: ['core', 'config', 'api', 'tracing', 'codec', 'transport', '.'],
  watch: ['core', 'transport', 'client'],
  cache: ['core', 'codec', 'client', 'watch'],
  queue: ['core'],
  leader: ['core', 'transport', 'client'],
  objects: ['core', 'transport', 'client'],
  // How a process is seen from outside, one room each: metrics, health checks, logging, serving
  // certificates, and the ops server (probes, metrics, the parked-keys view).
  metrics: ['core', 'queue', 'transport'],
  health: ['core'],
  logging: ['core'],
  tls: ['core'],
  server: ['core', 'transport', 'metrics', 'health', 'tls'],
  controller: [
    'core',
    'transport',
    'client',
    'watch',
    'cache',
    'queue',
    'metrics',
    'health',
    'logging',
    'server',
    'tls',
    'tracing',
  ],
  // Sharding: membership Leases and assignment labels through the client, the reconciler type, metrics.
  sharding: ['core', 'client', 'controller', 'metrics', 'health', 'logging', 'server', 'tls'],
  manager:
    'core transport client watch cache queue leader objects metrics health logging server tls controller sharding tracing'.split(
      ' ',
    ),
  // edgeop/testing: a leaf on the public folders; nothing imports it (checked below), so the artifact does not grow.
  testing: ['core', 'config', 'transport', 'client'],
  // Guards for calls to dependencies outside the cluster (circuit breaker); metrics through observability.
  resilience: ['core', 'metrics', 'health', 'logging', 'server', 'tls'],
  // bundle-time only (edgeop/esbuild): node built-ins and esbuild's types, nothing of the runtime.
  esbuild: [],
  // Admission webhooks: an HTTPS server (observability's certificates and metrics) and a certificate controller (client).
  webhook: ['core', 'client', 'metrics', 'health', 'logging', 'server', 'tls'],
  // edgeop/operator: a process around the manager (flags through the CLI); main.ts and the operators use it.
  operator: [
    'core',
    'config',
    'client',
    'cache',
    'objects',
    'metrics',
    'health',
    'logging',
    'server',
    'tls',
    'controller',
    'manager',
    'webhook',
    'cli',
    'tracing',
  ],
  // src/index.ts (the library barrel) and src/version.ts; src/main.ts (the binary) is checked below.
  '.': [
    'core',
    'config',
    'api',
    'client',
    'watch',
    'cache',
    'queue',
    'leader',
    'objects',
    'metrics',
    'health',
    'logging',
    'server',
    'tls',
    'controller',
    'manager',
    'resilience',
    'sharding',
    'tracing',
    'webhook',
    '.',
  ],
}
/** npm packages and the only files allowed to import them. */
const NPM_HOMES: Record<string, RegExp> = {
  undici: /^transport\/undici(-internals\.d)?\.ts$/,
  zod: /^(config|operators|objects|cli)\//,
  esbuild: /^esbuild\//,
}
const LIBRARY = new Set(Object.keys(ALLOWED))

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [
    // No `/` before `from`: a declaration followed by a comment quoting something is not an import.
    ...text.matchAll(/^\s*(?:import|export)\s[^'"/]*?from\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!)
}
const folderOf = (rel: string) => (rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : '.')

test('src/ imports follow the dependency table', () => {
  const violations: string[] = []
  for (const file of files(SRC)) {
    const rel = relative(SRC, file)
    const from = folderOf(rel)
    for (const spec of imports(file)) {
      if (spec.startsWith('node:')) continue
      if (!spec.startsWith('.')) {
        const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!
        const home = NPM_HOMES[pkg]
        if (!home?.test(rel)) violations.push(`${rel} imports npm package ${spec}`)
        continue
      }
      const target = relative(SRC, resolve(dirname(file), spec))
      const to = folderOf(target)
      if (to === from) continue
      if (rel === 'main.ts') {
        // The binary is a consumer: public entry points only, operators and the CLI included.
        if (!target.endsWith('index.ts') && target !== 'version.ts')
          violations.push(`main.ts → ${target} (public index.ts files only)`)
        continue
      }
      if (LIBRARY.has(from)) {
        if (!ALLOWED[from]!.includes(to)) violations.push(`${rel} → ${target} (${from} may not import ${to})`)
      } else if (!(LIBRARY.has(to) && (target.endsWith('/index.ts') || target === 'index.ts'))) {
        // Reference operators: only public entry points of library folders.
        if (folderOf(target) !== from)
          violations.push(`${rel} → ${target} (operators import only public index.ts files)`)
      }
    }
  }
  assert.deepEqual(violations, [])
})

test('nothing outside src/testing imports it (the library barrel, main.ts and the operators stay without it)', () => {
  const importers = files(SRC).filter((file) => {
    const rel = relative(SRC, file)
    if (folderOf(rel) === 'testing') return false
    return imports(file).some(
      (spec) => spec.startsWith('.') && folderOf(relative(SRC, resolve(dirname(file), spec))) === 'testing',
    )
  })
  assert.deepEqual(
    importers.map((f) => relative(SRC, f)),
    [],
  )
})

test('every library folder has an index.ts that only re-exports', () => {
  for (const folder of Object.keys(ALLOWED).filter((f) => f !== '.')) {
    let text = ''
    try {
      text = readFileSync(join(SRC, folder, 'index.ts'), 'utf8')
    } catch {
      continue // folders not written yet
    }
    const rest = text
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '')
      .replace(/export\s+(\*|type\s*\{[^}]*\}|\{[^}]*\})\s+from\s+'\.{1,2}\/[\w./-]+\.ts'/g, '')
      .trim()
    assert.equal(rest, '', `${folder}/index.ts has more than re-exports`)
  }
})

test('src/version.ts matches package.json', async () => {
  const { VERSION } = await import('../src/version.ts')
  const pkg = JSON.parse(readFileSync(resolve(SRC, '../package.json'), 'utf8')) as { version: string }
  assert.equal(VERSION, pkg.version)
})
