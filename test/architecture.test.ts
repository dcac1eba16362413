/**
 * Dependencies point one way: core → config → codec → transport → client → watch → cache → controller → manager,
 * with queue (core only) and leader (core, transport, client) beside them, tracing (core only) below the transport,
 * objects (helpers on Kubernetes objects) on the client, one room each for metrics, health, logging, tls and the ops
 * server, and only the manager depending on leader election; reference operators import only the public entry points.
 * This test reads every import in src/ and fails
 * on any edge the table does not allow, and on any npm import outside its home. Inside and across folders, files
 * import each other one way (no cycle between files), and a hand-written file holds one concept (at most
 * {@link MAX_SOURCE_LINES} lines).
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
  controller: ['core', 'transport', 'client', 'cache', 'queue', 'metrics', 'logging', 'server', 'tracing'],
  // Sharding: membership Leases and assignment labels through the client, the reconciler type, metrics.
  sharding: ['core', 'client', 'controller', 'metrics'],
  manager:
    'core transport client watch cache queue leader objects metrics health logging server tls controller sharding tracing'.split(
      ' ',
    ),
  // edgeop/testing: a leaf on the public folders; nothing imports it (checked below), so the artifact does not grow.
  testing: ['core', 'config', 'transport', 'client'],
  // Guards for calls to dependencies outside the cluster (circuit breaker), with their metrics.
  resilience: ['core', 'metrics'],
  // bundle-time only (edgeop/esbuild): node built-ins and esbuild's types, nothing of the runtime.
  esbuild: [],
  // Admission webhooks: an HTTPS server on the guarded request path (server, tls, metrics) and a certificate controller
  // (client; the API error predicates from transport/api-error.ts directly, as objects takes them, so that the
  // edgeop/webhook entry does not load the whole client through its barrel).
  webhook: ['core', 'codec', 'transport', 'client', 'metrics', 'server', 'tls'],
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

/**
 * Relative imports of a file, `import type` included: a cycle of types is a cycle of design (two files that
 * each need the other to be read), even when the emitted JavaScript would load in either order.
 */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...imports(file), ...[...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!)]
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => relative(SRC, resolve(dirname(file), spec)))
}

/**
 * The import cycles of `graph` (file → files it imports): every strongly connected component of more
 * than one file, and every file that imports itself, each as its sorted files, in order of their first
 * file (Tarjan's algorithm).
 */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const order = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (v: string): void => {
    order.set(v, order.size)
    low.set(v, order.get(v)!)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!order.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, order.get(w)!))
    }
    if (low.get(v) !== order.get(v)) return
    const component: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      component.push(w)
    } while (w !== v)
    if (component.length > 1 || graph.get(v)!.includes(v)) cycles.push(component.sort())
  }
  for (const v of graph.keys()) if (!order.has(v)) visit(v)
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!))
}

/** A hand-written source file holds one concept; past this many lines it holds more and is split. */
const MAX_SOURCE_LINES = 400
/** Generated files say so in their header (`Generated by …`, Go's `Code generated by … DO NOT EDIT.`). */
const GENERATED_HEADER = /\bgenerated by\b/i
/** How far into a file its header reaches. */
const HEADER_CHARS = 600

/** Hand-written files of `sources` (path → text) longer than `max` lines, as `path: lines`. */
function oversizedFiles(sources: ReadonlyMap<string, string>, max: number): string[] {
  return [...sources]
    .filter(([, text]) => !GENERATED_HEADER.test(text.slice(0, HEADER_CHARS)))
    .map(([path, text]) => [path, text.split('\n').length - (text.endsWith('\n') ? 1 : 0)] as const)
    .filter(([, lines]) => lines > max)
    .map(([path, lines]) => `${path}: ${lines} lines`)
}

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

test('no import cycle between files of src/, type-only imports included', () => {
  const graph = new Map(files(SRC).map((file) => [relative(SRC, file), relativeImports(file)]))
  assert.deepEqual(findCycles(graph), [])
})

test('the cycle finder names every cycle and only cycles', () => {
  const graph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts', 'd.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['e.ts']],
    ['e.ts', []],
    ['f.ts', ['f.ts']],
    ['g.ts', ['e.ts', 'npm-package']],
  ])
  assert.deepEqual(findCycles(graph), [['a.ts', 'b.ts', 'c.ts'], ['f.ts']])
  graph.set('e.ts', ['d.ts'])
  assert.deepEqual(findCycles(graph), [['a.ts', 'b.ts', 'c.ts'], ['d.ts', 'e.ts'], ['f.ts']])
})

test(`no hand-written source file in src/ is over ${MAX_SOURCE_LINES} lines (generated files exempt by their header)`, () => {
  const sources = new Map(files(SRC).map((file) => [relative(SRC, file), readFileSync(file, 'utf8')]))
  assert.deepEqual(oversizedFiles(sources, MAX_SOURCE_LINES), [])
})

test('the size rule counts lines and exempts only files whose header says they are generated', () => {
  const lines = (n: number, header = '') => header + 'x\n'.repeat(n - (header ? 1 : 0))
  const sources = new Map([
    ['at-limit.ts', lines(3)],
    ['over.ts', lines(4)],
    ['generated.ts', lines(9, '// Code generated by gen. DO NOT EDIT.\n')],
    ['says-generated-below-its-header.ts', `${lines(3)}${' '.repeat(HEADER_CHARS)}// generated by hand\n`],
  ])
  assert.deepEqual(oversizedFiles(sources, 3), [
    'over.ts: 4 lines',
    'says-generated-below-its-header.ts: 4 lines',
  ])
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
