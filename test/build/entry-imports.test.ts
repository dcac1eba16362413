/**
 * What importing an entry of the library (dist/lib, as `npm run build` makes it) loads: its chunks, the
 * sources in them and the modules outside the package. A process that imports `edgeop` pays in RSS for
 * every module its entry loads (test/bench/base-rss.bench.ts measures it; docs/benchmarks.md has the
 * numbers). These tests pin the graph instead of the megabytes, so an import that brings a cost back fails
 * here: the library is built in memory with the build's own esbuild options (build/library.ts) and each
 * entry's static imports are followed chunk by chunk (a dynamic `import()` loads nothing until it runs).
 * The last test reads the sources for the locale calls that would load ICU's data at first use.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { glob } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import * as esbuild from 'esbuild'
import { ROOT } from '../../build/artifact.ts'
import { libraryBuildOptions, SUBPATHS } from '../../build/library.ts'

/** What an entry loads when imported: source files (relative to the repo) and imports outside the package. */
interface EntryGraph {
  readonly sources: ReadonlySet<string>
  readonly external: ReadonlySet<string>
}

const meta = await buildMetafile()

async function buildMetafile(): Promise<esbuild.Metafile> {
  const result = await esbuild.build({
    ...libraryBuildOptions(ROOT),
    write: false,
    metafile: true,
    logLevel: 'error',
  })
  return result.metafile
}

function entryGraph(entry: string): EntryGraph {
  const sources = new Set<string>()
  const external = new Set<string>()
  const seen = new Set<string>()
  const pending = [`dist/lib/${entry}.js`]
  assert.ok(meta.outputs[pending[0]!], `no output ${pending[0]}`)
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (seen.has(next)) continue
    seen.add(next)
    const output = meta.outputs[next]!
    for (const input of Object.keys(output.inputs)) sources.add(input)
    for (const im of output.imports) {
      if (im.kind !== 'import-statement') continue
      if (im.external) external.add(im.path)
      else pending.push(im.path)
    }
  }
  return { sources, external }
}

/**
 * Node built-ins whose ESM namespace runs a costly getter when it is built (see src/core/node-builtins.ts):
 * `http.WebSocket` loads Node's bundled undici (about 12 MB), `tls.rootCertificates` copies the root
 * store, `process.stdin`/`stdout`/`stderr` open streams, `util`'s getters build abort signals.
 */
const COSTLY_NAMESPACES = [
  'node:http',
  'node:tls',
  'node:process',
  'node:util',
  'http',
  'tls',
  'process',
  'util',
]

/** Entries a running program loads (edgeop/testing and the bundle-time edgeop/esbuild are not). */
const RUNTIME_ENTRIES = ['index', 'bin', ...SUBPATHS.filter((s) => s !== 'testing' && s !== 'esbuild')]

test('no runtime entry imports node:http, node:tls, node:process or node:util as an ESM namespace', () => {
  for (const entry of RUNTIME_ENTRIES) {
    const costly = [...entryGraph(entry).external].filter((path) => COSTLY_NAMESPACES.includes(path))
    assert.deepEqual(costly, [], `dist/lib/${entry}.js imports ${costly.join(', ')} as ESM`)
  }
})

/** The folders of src/ a program that only talks to the API server needs: the client's own dependencies. */
const CLIENT_ROOMS = ['core', 'config', 'api', 'tracing', 'codec', 'transport', 'client', 'version.ts']

test('edgeop/client loads only the client and the rooms below it, not the manager, server or metrics', () => {
  const rooms = new Set([...entryGraph('client').sources].map((file) => file.split('/')[1]))
  const extra = [...rooms].filter((room) => room !== undefined && !CLIENT_ROOMS.includes(room))
  assert.deepEqual(extra, [], `edgeop/client loads src/${extra.join(', src/')}`)
})

/**
 * Entries that load no zod: importing zod costs about 14 MB of RSS (its core and locales, whichever of its
 * entries is imported). The root's CRD generator reads the user's schemas without importing zod
 * (src/objects/crd.ts), and a kubeconfig is decoded without it (src/config/kubeconfig-schema.ts).
 */
const WITHOUT_ZOD = ['index', 'client', 'config', 'cache', 'controller', 'manager', 'watch', 'leader']

test('the root, client, config, cache, controller, manager, watch and leader entries import no zod', () => {
  for (const entry of WITHOUT_ZOD) {
    const zod = [...entryGraph(entry).external].filter((path) => path === 'zod' || path.startsWith('zod/'))
    assert.deepEqual(zod, [], `dist/lib/${entry}.js imports ${zod.join(', ')}`)
  }
})

/**
 * Entries whose code never sends a request itself: the objects helpers, webhooks and circuit breakers take a
 * client the user built (which loads undici). Importing one of them through the client barrel once made the
 * entry load the whole client: transport, undici and the protobuf tables (about 12 MB).
 */
const WITHOUT_UNDICI = ['objects', 'webhook', 'resilience', 'cache', 'watch', 'queue', 'metrics', 'health']

test('edgeop/objects, webhook, resilience, cache, watch, queue, metrics and health import no undici', () => {
  for (const entry of WITHOUT_UNDICI) {
    const undici = [...entryGraph(entry).external].filter((path) => path.startsWith('undici'))
    assert.deepEqual(undici, [], `dist/lib/${entry}.js imports ${undici.join(', ')}`)
  }
})

/**
 * Locale-aware calls that load ICU's data on first use: `(1234.5).toLocaleString()` adds 7.5 MB of RSS to an
 * empty process and `localeCompare` 2.9 MB (Node 24.21, measured by hand 2026-12-02). edgeop formats numbers,
 * dates and sorts without them; a new use fails here and has to bring its reason.
 */
const ICU_CALLS = /\bIntl\.|\.toLocale(?:Date|Time)?String\(|\.localeCompare\(/

test('no source file calls Intl, toLocaleString or localeCompare, which load ICU data (3 to 8 MB)', async () => {
  const found: string[] = []
  for await (const file of glob('src/**/*.ts', { cwd: ROOT })) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n')
    lines.forEach((line, i) => {
      if (ICU_CALLS.test(line)) found.push(`${file}:${i + 1}`)
    })
  }
  assert.deepEqual(found, [])
})
