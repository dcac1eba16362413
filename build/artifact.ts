/**
 * @module build/artifact — esbuild settings for the single-file operator artifact.
 *
 * One CommonJS file (a single executable needs CJS on Node 22/24), minified, with every
 * dependency inlined, undici trimmed (src/esbuild/undici-trims.ts, build/undici-trims.ts). Its
 * largest trim: undici's HTTP/1.1 client and the llhttp WebAssembly parser it loads are stubbed
 * out (`noHttp1Client`), since the client sends HTTP/1.1 through `node:http` and uses undici for
 * HTTP/2 only (measured 2026-12-01: see test/build/artifact.test.ts).
 * After esbuild, terser minifies the code once more ({@link TERSER_OPTIONS}). The code, undici and zod
 * are packed: brotli-compressed on the artifact's last line behind a one-line loader ({@link packArtifact}).
 */
import { createHash } from 'node:crypto'
import { glob, mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { brotliCompressSync, brotliDecompressSync, gzipSync, constants as zlibConstants } from 'node:zlib'
import * as esbuild from 'esbuild'
import { type MinifyOptions, minify } from 'terser'
import { UNDICI_DEFINE, UNDICI_TRIMS } from '../src/esbuild/undici-trims.ts'
import {
  CLIENT_OPTION_MESSAGES,
  DEBUG_LOGGING,
  HEADER_NAME_TABLES,
  REQUEST_BODY_WRITERS,
  REQUEST_OPTION_MESSAGES,
  RESPONSE_BODY_READERS,
  UNREFERENCED_EXPORTS,
  UNSET_OPTIONS,
  UPGRADE_AND_CONNECT,
  undiciTrims,
} from './undici-trims.ts'

export const ROOT = join(dirname(new URL(import.meta.url).pathname), '..')
export const ARTIFACT = join(ROOT, 'dist/edgeop.cjs')
export const METAFILE = join(ROOT, 'dist/edgeop.meta.json')
/**
 * The artifact unpacked ({@link inflateArtifact}), written beside it: the same program as plain source, which
 * the single executable and the `node` image ship, so that their V8 code caches (made after a run) cover
 * edgeop's code. Measured 2026-12-02 under the image's compile cache and `--optimize-for-size`, 21
 * interleaved runs of `version` (median, load 9 to 10): wall 120.9 ms before packing, 132.5 packed, 125.6
 * unpacked; peak RSS 59.6, 61.4 and 58.8 MB.
 */
export const UNPACKED_ARTIFACT = join(ROOT, 'dist/edgeop.unpacked.cjs')

/** The esbuild plugins that trim undici for the artifact (also used by tests that bundle with them). */
export const ARTIFACT_PLUGINS: readonly esbuild.Plugin[] = [
  ...UNDICI_TRIMS,
  undiciTrims('undici-unreachable-declarations', [
    ...REQUEST_BODY_WRITERS,
    ...UPGRADE_AND_CONNECT,
    ...UNREFERENCED_EXPORTS,
    ...UNSET_OPTIONS,
    ...DEBUG_LOGGING,
    ...RESPONSE_BODY_READERS,
    ...REQUEST_OPTION_MESSAGES,
  ]),
  HEADER_NAME_TABLES,
  CLIENT_OPTION_MESSAGES,
]

/**
 * The artifact's first line: the notice comment (terser never sees it). The strict-mode directive
 * that opens the code after it is esbuild's (test/build/artifact.test.ts checks it stays first).
 */
function banner(version: string): string {
  return `/* edgeop ${version} - bundles undici and zod (MIT); notices: dist/THIRD-PARTY-NOTICES */`
}

/**
 * The second minification pass, over esbuild's output without the banner (measured 2026-12-01 on
 * 360,376 bytes / 127,228 gzip -9: 353,995 / 122,264; terser shortens what esbuild keeps, e.g.
 * top-level names, and joins statements). `passes: 3` (2026-12-01: −58 bytes, −70 gzip by the budget's measure against 2
 * passes; a 4th changes nothing); the unsafe and `pure_getters` options are left off, since
 * undici's getters have effects. `ascii_only`: terser writes the characters esbuild escaped (`…`,
 * `≥`, `µ`) back as they are, and one character outside Latin-1 makes V8 hold the whole 357 KB
 * source as a two-byte string for the life of the process (a heap snapshot of the idle operator,
 * 2026-12-01: 713,304 bytes); escaped, it is a one-byte string of half that.
 */
export const TERSER_OPTIONS: MinifyOptions = {
  ecma: 2022,
  toplevel: true,
  compress: { passes: 3 },
  format: { comments: false, ascii_only: true },
}

/**
 * The third-party modules the artifact carries packed ({@link packDependencies}), by the key the packed
 * bundle exports them under: the three undici modules src/transport/undici.ts imports (with every undici
 * module they reach) and zod/mini (the functions the sources call: `zodNamesUsed`).
 */
export const PACKED_MODULES: Readonly<Record<string, string>> = {
  request: 'undici/lib/api/api-request.js',
  connect: 'undici/lib/core/connect.js',
  Pool: 'undici/lib/dispatcher/pool.js',
  zod: 'zod/mini',
}

/**
 * The function, declared on the artifact's last line, that returns the packed bundle in base64. A
 * function declaration is hoisted, so the loader near the top can call it. On the last line, fewer
 * code symbols share a deflate block with the base64 than on the first (measured 2026-12-02: GNU gzip -9
 * 123,590 last, 123,440 first, but zlib 123,231 last, 123,809 first).
 */
export const PACKED_FUNCTION = 'edgeopPacked'

/** The parameter through which the packed code receives the dependencies' source ({@link packArtifact}). */
export const DEPENDENCIES_PARAMETER = 'edgeopDependencies'

/**
 * undici and zod, bundled and minified on their own (with the artifact's trims), for {@link packArtifact}.
 * Measured 2026-12-02, when they were packed alone: 107,802 bytes of minified source, 28,460 of brotli;
 * in the artifact, with the same sources, 125,043 gzip -9 became 123,891 (zlib's measure; undici alone
 * −661, zod −491 more). The loader compiles them from source at the first import, outside the single
 * executable's code cache; their stack frames read `dist/edgeop.cjs#dependencies` and a position in the
 * source that `unpackDependencies` gives back.
 */
export async function packDependencies(): Promise<{ source: string; metafile: esbuild.Metafile }> {
  const ZOD_NAMES = await zodNamesUsed()
  const result = await esbuild.build({
    stdin: {
      contents: `${Object.entries(PACKED_MODULES)
        .filter(([key]) => key !== 'zod')
        .map(([key, path]) => `import ${key} from ${JSON.stringify(path)}`)
        .join('\n')}
import { ${ZOD_NAMES.map((n) => `${n} as z_${n}`).join(', ')} } from 'zod/mini'
export const zod = { ${ZOD_NAMES.map((n) => `${n}: z_${n}`).join(', ')} }
export { ${Object.keys(PACKED_MODULES)
        .filter((k) => k !== 'zod')
        .join(', ')} }`,
      resolveDir: ROOT,
      loader: 'js',
    },
    bundle: true,
    minify: true,
    format: 'cjs',
    platform: 'node',
    target: 'node22',
    metafile: true,
    write: false,
    legalComments: 'none',
    define: { ...UNDICI_DEFINE },
    plugins: [...ARTIFACT_PLUGINS],
    logLevel: 'warning',
  })
  const { code } = await minify(result.outputFiles[0]!.text, TERSER_OPTIONS)
  return { source: withoutSymbolDescriptions(code!), metafile: result.metafile }
}

/**
 * The artifact after its banner line: a loader of one line and the {@link PACKED_FUNCTION} line, which
 * holds `dependencies` (undici and zod) and `code` (edgeop's own, minified, starting with its strict-mode
 * directive) joined by a NUL, brotli-compressed at quality 11 and base64-encoded. The loader inflates both
 * and compiles `code` as a CommonJS function body with `vm.compileFunction` under the artifact's own
 * file name, so stack frames name dist/edgeop.cjs (at a position in the inflated code: {@link unpackArtifact}
 * gives it back); `code` gets the dependencies' source as {@link DEPENDENCIES_PARAMETER}.
 * Measured 2026-12-02 on the same sources: see test/build/artifact.test.ts.
 */
export function packArtifact(dependencies: string, code: string): string {
  if (!code.startsWith('"use strict";'))
    throw new Error('build: the minified code lost its strict-mode directive')
  if (dependencies.includes('\0') || code.includes('\0')) throw new Error('build: a NUL in the code to pack')
  const source = `${dependencies}\0${code}`
  const packed = brotliCompressSync(source, {
    params: {
      [zlibConstants.BROTLI_PARAM_QUALITY]: zlibConstants.BROTLI_MAX_QUALITY,
      [zlibConstants.BROTLI_PARAM_LGWIN]: zlibConstants.BROTLI_MAX_WINDOW_BITS,
      [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
      [zlibConstants.BROTLI_PARAM_SIZE_HINT]: source.length,
    },
  })
  const parameters = ['exports', 'require', 'module', '__filename', '__dirname', DEPENDENCIES_PARAMETER]
  const loader =
    '"use strict";{const[d,c]=require("node:zlib").brotliDecompressSync(Buffer.from(' +
    `${PACKED_FUNCTION}(),"base64")).toString("latin1").split("\\0");` +
    `require("node:vm").compileFunction(c,${JSON.stringify(parameters)},{filename:__filename})` +
    '(exports,require,module,__filename,__dirname,d)}'
  return `${loader}\nfunction ${PACKED_FUNCTION}(){return"${packed.toString('base64')}"}\n`
}

/**
 * The zod/mini exports edgeop's sources use: every module imports it as `import * as z from 'zod/mini'`
 * (checked here), so its value names are the `z.<name>` that zod/mini exports (types such as `z.infer`
 * are not exports and drop out; `z.core.$ZodCheck`, a type inside the `core` namespace, is skipped, since
 * the namespace as a value is all of zod's core). Packed, zod is not tree-shaken by the artifact's build, so the packed
 * bundle exports exactly these.
 */
export async function zodNamesUsed(): Promise<string[]> {
  const exported = new Set(Object.keys(await import('zod/mini')))
  const names = new Set<string>()
  for await (const file of glob('src/**/*.ts', { cwd: ROOT })) {
    const source = await readFile(join(ROOT, file), 'utf8')
    for (const m of source.matchAll(/^import\b[^;\n]*from 'zod\/mini'/gm))
      if (!m[0].startsWith("import * as z from 'zod/mini'") && !m[0].startsWith('import type '))
        throw new Error(`build: ${file} imports zod/mini otherwise than \`import * as z\` (${m[0]})`)
    if (!source.includes("from 'zod/mini'")) continue
    // Comments name schemas the code may not use (`z.iso.datetime()` in crd.ts's): block comments and
    // whole-line `//` comments are left out (a `/*` inside a string only hides names, which the
    // artifact's `crd` and `--help` tests would catch as a missing function).
    const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
    for (const m of code.matchAll(/\bz\.([A-Za-z_$][\w$]*)(?![\w$]|\.\$)/g))
      if (exported.has(m[1]!)) names.add(m[1]!)
  }
  return [...names].sort()
}

/**
 * `source` with every `Symbol("description")` made `Symbol()`. undici names its ~170 private property keys
 * this way (`Symbol('connect-options')`, 2.3 KB of descriptions); a description only shows in `util.inspect`
 * and neither undici nor zod reads one back (`Symbol.for` keys, which are looked up by name, are kept).
 */
export function withoutSymbolDescriptions(source: string): string {
  return source.replace(/\bSymbol\("(?:[^"\\]|\\.)*"\)/g, 'Symbol()')
}

/** The two sources packed into `artifact` (its last line), inflated: undici and zod, and edgeop's own code. */
function unpack(artifact: string): [dependencies: string, code: string] {
  const m = new RegExp(`function ${PACKED_FUNCTION}\\(\\)\\{return"([A-Za-z0-9+/=]+)"\\}\\n?$`).exec(artifact)
  if (m === null) throw new Error('the artifact has no packed line')
  const source = brotliDecompressSync(Buffer.from(m[1]!, 'base64')).toString('latin1')
  const at = source.indexOf('\0')
  return [source.slice(0, at), source.slice(at + 1)]
}

/** The source packed into `artifact`, inflated: what the artifact runs as undici and zod. */
export function unpackDependencies(artifact: string): string {
  return unpack(artifact)[0]
}

/**
 * edgeop's own code packed into `artifact`, inflated: the positions in the artifact's stack frames
 * (`dist/edgeop.cjs:1:4242`) are in this source.
 */
export function unpackArtifact(artifact: string): string {
  return unpack(artifact)[1]
}

/**
 * `artifact` (the packed dist/edgeop.cjs) as the same program unpacked: its banner, then edgeop's own code
 * with the dependencies' source declared before it. The single executable embeds this form (build/sea.ts),
 * so that its V8 code cache, made after a run, holds the functions of edgeop's code too: packed, they are
 * compiled by the loader in a script of their own, which the cache of the artifact's script does not cover.
 */
export function inflateArtifact(artifact: string): string {
  const [dependencies, code] = unpack(artifact)
  const banner = artifact.slice(0, artifact.indexOf('\n') + 1)
  // The code on a line of its own (the third), so the columns of its stack frames are those of the packed code.
  return `${banner}"use strict";const ${DEPENDENCIES_PARAMETER}=${JSON.stringify(dependencies)};\n${code}\n`
}

/**
 * In the artifact, the undici and zod imports resolve to the packed bundle: its source, inflated by the
 * artifact's loader ({@link packArtifact}), is compiled once, at the first import, and run with a `require`
 * that serves Node's built-in modules (all the bundle requires: test/build/artifact.test.ts checks it).
 */
const PACKED_DEPENDENCIES: esbuild.Plugin = {
  name: 'edgeop-packed',
  setup(b) {
    const keys = new Map(Object.entries(PACKED_MODULES).map(([key, path]) => [path, key]))
    b.onResolve({ filter: /^(undici\/lib\/|zod\/mini$)/ }, (args) => {
      const key = keys.get(args.path)
      return key === undefined ? undefined : { path: key, namespace: 'edgeop-packed' }
    })
    b.onResolve({ filter: /^edgeop-packed$/ }, () => ({
      path: 'all',
      namespace: 'edgeop-packed',
    }))
    b.onLoad({ filter: /.*/, namespace: 'edgeop-packed' }, (args) => ({
      contents:
        args.path === 'all'
          ? `const m = { exports: {} }
require('node:vm').compileFunction(${DEPENDENCIES_PARAMETER}, ['module', 'exports', 'require'], { filename: __filename + '#dependencies' })(m, m.exports, (id) => process.getBuiltinModule(id))
module.exports = m.exports`
          : `module.exports = require('edgeop-packed').${args.path}`,
      loader: 'js',
    }))
  },
}

/** The esbuild options of the artifact (entry src/main.ts, outfile dist/edgeop.cjs). */
export function artifactOptions(version: string): esbuild.BuildOptions & { metafile: true } {
  return {
    entryPoints: [join(ROOT, 'src/main.ts')],
    bundle: true,
    minify: true,
    format: 'cjs',
    platform: 'node',
    target: 'node22',
    outfile: ARTIFACT,
    metafile: true,
    legalComments: 'none',
    define: { ...UNDICI_DEFINE },
    tsconfig: join(ROOT, 'build/tsconfig.artifact.json'),
    banner: { js: banner(version) },
    plugins: [...ARTIFACT_PLUGINS],
    logLevel: 'warning',
  }
}

/**
 * Builds dist/edgeop.cjs from src/main.ts (esbuild, then terser after the banner); returns the
 * metafile (its byte counts are esbuild's, before terser).
 */
export async function buildArtifact(): Promise<esbuild.Metafile> {
  await mkdir(dirname(ARTIFACT), { recursive: true })
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }
  const options = artifactOptions(pkg.version)
  const packed = await packDependencies()
  const result = await esbuild.build({
    ...options,
    plugins: [PACKED_DEPENDENCIES, ...options.plugins!],
    write: false,
  })
  const bundled = result.outputFiles[0]!.text
  const head = `${options.banner!.js!}\n`
  if (!bundled.startsWith(head)) throw new Error('build: the artifact does not start with its banner')
  const { code } = await minify(bundled.slice(head.length), TERSER_OPTIONS)
  const artifact = `${head}${packArtifact(packed.source, code!)}`
  await writeFile(ARTIFACT, artifact)
  await writeFile(UNPACKED_ARTIFACT, inflateArtifact(artifact))
  const metafile = mergeMetafiles(result.metafile, packed.metafile)
  await writeFile(METAFILE, JSON.stringify(metafile))
  await writeNotices()
  return metafile
}

/**
 * The artifact's metafile with the packed build's inputs added to its inputs and its output's,
 * so that what the artifact carries is listed in one place (byte counts are esbuild's, before terser).
 */
function mergeMetafiles(main: esbuild.Metafile, packed: esbuild.Metafile): esbuild.Metafile {
  const packedOutput = Object.values(packed.outputs)[0]!
  const [name, output] = Object.entries(main.outputs)[0]!
  return {
    inputs: { ...main.inputs, ...packed.inputs },
    outputs: { ...main.outputs, [name]: { ...output, inputs: { ...output.inputs, ...packedOutput.inputs } } },
  }
}

/** The licenses of what the artifact bundles, shipped beside it. */
async function writeNotices(): Promise<void> {
  const parts: string[] = []
  for (const dep of ['undici', 'zod']) {
    const dir = join(ROOT, 'node_modules', dep)
    const text = await readFile(join(dir, 'LICENSE'), 'utf8').catch(() =>
      readFile(join(dir, 'LICENSE.md'), 'utf8'),
    )
    parts.push(`== ${dep} ==\n${text.trim()}\n`)
  }
  await writeFile(join(ROOT, 'dist/THIRD-PARTY-NOTICES'), parts.join('\n'))
}

/** Bytes in the artifact by origin: our code vs each dependency. */
export function bytesByOrigin(meta: esbuild.Metafile): Record<string, number> {
  const out: Record<string, number> = {}
  for (const output of Object.values(meta.outputs)) {
    for (const [file, info] of Object.entries(output.inputs)) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)
      const key = m ? m[1]! : 'edgeop (src/)'
      out[key] = (out[key] ?? 0) + info.bytesInOutput
    }
  }
  return out
}

/**
 * `buf`'s gzip -9 size as the larger of two zlib measures at level 9: memLevel 8 (Node's default:
 * a deflate block every 16K symbols) and memLevel 9 (every 32K symbols, as GNU gzip -9 cuts them).
 * Block length matters: on 2026-12-01, with 20 KB of base64 (the packed llhttp module, since
 * removed) sharing blocks and Huffman tables with code, the two measures differed by 1.4 KB.
 */
export function gzipBytes(buf: Uint8Array): number {
  return Math.max(gzipSync(buf, { level: 9 }).length, gzipSync(buf, { level: 9, memLevel: 9 }).length)
}

/** Size summary of the artifact as built. */
export async function artifactSize(): Promise<{ bytes: number; gzip: number; sha256: string }> {
  const buf = await readFile(ARTIFACT)
  return {
    bytes: buf.length,
    gzip: gzipBytes(buf),
    sha256: createHash('sha256').update(buf).digest('hex'),
  }
}
