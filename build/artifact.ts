/**
 * @module build/artifact — esbuild settings for the single-file operator artifact.
 *
 * One CommonJS file (a single executable needs CJS on Node 22/24), minified, with every
 * dependency inlined. Two undici trims, both measured (edge-facts §4/§5):
 * - `esbuildDetection` defined: undici then leaves out its experimental Milo HTTP/1.1
 *   parser (its own switch, the one Node core uses when it bundles undici);
 * - the non-SIMD llhttp WebAssembly fallback (72 KB) is replaced by a module that throws
 *   a clear error: it is only used where WebAssembly SIMD is missing (riscv64, old
 *   ppc64), and HTTP/2 connections never load llhttp at all.
 * After esbuild, terser minifies the code once more ({@link TERSER_OPTIONS}).
 */
import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { brotliCompressSync, gzipSync, constants as zlibConstants } from 'node:zlib'
import * as esbuild from 'esbuild'
import { type MinifyOptions, minify } from 'terser'
import {
  llhttpConstantsUsedOnly,
  noFormData,
  noSimdFallback,
  UNDICI_DEFINE,
} from '../src/esbuild/undici-trims.ts'
import {
  HEADER_NAME_TABLES,
  REQUEST_BODY_WRITERS,
  UNREFERENCED_EXPORTS,
  UNSET_OPTIONS,
  UPGRADE_AND_CONNECT,
  undiciTrims,
} from './undici-trims.ts'
import { keepExports } from './wasm-exports.ts'

export const ROOT = join(dirname(new URL(import.meta.url).pathname), '..')
export const ARTIFACT = join(ROOT, 'dist/edgeop.cjs')
export const METAFILE = join(ROOT, 'dist/edgeop.meta.json')

/**
 * The llhttp SIMD WebAssembly module ships as base64, which gzip shrinks poorly (54 KB of
 * wasm → 72 KB of base64 → 24 KB gzip). Stored brotli-compressed instead (quality 11,
 * then base64: 15 KB in the gzipped artifact) and decompressed with Node's own zlib the
 * first time an HTTP/1.1 connection needs the parser, exactly as lazily as before.
 *
 * The base64 text sits in the artifact's last line ({@link artifactOptions}' footer), not where
 * undici's module is: 20 KB of incompressible text in the middle of the code would push the code
 * before it out of gzip's 32 KB window for the code after it (measured: 870 bytes of gzip). Last,
 * not first: deflate codes a block's symbols with one Huffman table, and GNU gzip -9 closes a block
 * every 32K symbols (zlib at memLevel 8: 16K), so text that opens the file shares its block, and
 * the table, with the first ~13K symbols of code (measured 2026-12-01: gzip -9 123,687 → 122,604,
 * zlib memLevel 9 123,672 → 123,126; zlib memLevel 8 122,293 → 122,835). The module reads it
 * from that top-level variable, which is assigned when the file has run: the first HTTP/1.1
 * connection, which loads the parser, opens after that.
 */
export const LLHTTP_SIMD_VAR = '__edgeop_llhttp_simd'

/**
 * The llhttp exports undici's HTTP/1.1 client calls (`llhttp.<name>` in dispatcher/client-h1.js;
 * test/build/undici-trims.test.ts compares this list with that file). The other 30 (getters,
 * lenient-mode setters, name tables) are dropped from the module's export section.
 */
export const LLHTTP_EXPORTS_USED: ReadonlySet<string> = new Set([
  'memory',
  'malloc',
  'free',
  'llhttp_alloc',
  'llhttp_free',
  'llhttp_execute',
  'llhttp_finish',
  'llhttp_resume',
  'llhttp_get_error_reason',
  'llhttp_get_error_pos',
])

/** The brotli-compressed, base64-encoded llhttp SIMD WebAssembly module (only the exports used). */
export function packedLlhttpSimd(): string {
  const full = createRequire(import.meta.url)('undici/lib/llhttp/llhttp_simd-wasm.js') as Buffer
  const wasm = keepExports(full, LLHTTP_EXPORTS_USED)
  return brotliCompressSync(wasm, {
    params: {
      [zlibConstants.BROTLI_PARAM_QUALITY]: 11,
      [zlibConstants.BROTLI_PARAM_SIZE_HINT]: wasm.length,
    },
  }).toString('base64')
}

const LLHTTP_BROTLI: esbuild.Plugin = {
  name: 'llhttp-simd-brotli',
  setup(b) {
    b.onLoad({ filter: /llhttp[\\/]llhttp_simd-wasm\.js$/ }, () => ({
      contents: `let w; Object.defineProperty(module, 'exports', { get: () => w ??= require('node:zlib').brotliDecompressSync(Buffer.from(${LLHTTP_SIMD_VAR}, 'base64')) })`,
      loader: 'js',
    }))
  },
}

/** The esbuild plugins that trim undici for the artifact (also used by tests that bundle with them). */
export const ARTIFACT_PLUGINS: readonly esbuild.Plugin[] = [
  noSimdFallback,
  noFormData,
  llhttpConstantsUsedOnly,
  LLHTTP_BROTLI,
  undiciTrims('undici-unreachable-declarations', [
    ...REQUEST_BODY_WRITERS,
    ...UPGRADE_AND_CONNECT,
    ...UNREFERENCED_EXPORTS,
    ...UNSET_OPTIONS,
  ]),
  HEADER_NAME_TABLES,
]

/**
 * The artifact's first line: the notice comment (terser never sees it). The strict-mode directive
 * that opens the code after it is esbuild's (test/build/artifact.test.ts checks it stays first).
 */
function banner(version: string): string {
  return `/* edgeop ${version} — bundles undici and zod (MIT); notices: dist/THIRD-PARTY-NOTICES */`
}

/** The artifact's last line: the packed llhttp module ({@link LLHTTP_SIMD_VAR}; terser never sees it). */
function footer(): string {
  return `var ${LLHTTP_SIMD_VAR}="${packedLlhttpSimd()}";`
}

/**
 * The second minification pass, over esbuild's output without the banner and footer (measured 2026-12-01 on
 * 360,376 bytes / 127,228 gzip -9: 353,995 / 122,264; terser shortens what esbuild keeps, e.g.
 * top-level names, and joins statements). The llhttp line stays out of it: given the whole file, terser
 * inlines the single-use llhttp string where undici reads it, back into the middle of the code
 * (123,706 gzip). `passes: 3` (2026-12-01: −58 bytes, −70 gzip by the budget's measure against 2
 * passes; a 4th changes nothing); the unsafe and `pure_getters` options are left off, since
 * undici's getters have effects.
 */
export const TERSER_OPTIONS: MinifyOptions = {
  ecma: 2022,
  toplevel: true,
  compress: { passes: 3 },
  format: { comments: false },
}

/**
 * The esbuild options of the artifact (entry src/main.ts, outfile dist/edgeop.cjs). A bundle built
 * with {@link ARTIFACT_PLUGINS} needs this footer too (it holds the llhttp module).
 */
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
    banner: { js: banner(version) },
    footer: { js: footer() },
    plugins: [...ARTIFACT_PLUGINS],
    logLevel: 'warning',
  }
}

/**
 * Builds dist/edgeop.cjs from src/main.ts (esbuild, then terser between the banner and the footer); returns the
 * metafile (its byte counts are esbuild's, before terser).
 */
export async function buildArtifact(): Promise<esbuild.Metafile> {
  await mkdir(dirname(ARTIFACT), { recursive: true })
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }
  const options = artifactOptions(pkg.version)
  const result = await esbuild.build({ ...options, write: false })
  const bundled = result.outputFiles[0]!.text
  const head = `${options.banner!.js!}\n`
  const tail = `\n${options.footer!.js!}\n`
  if (!bundled.startsWith(head) || !bundled.endsWith(tail))
    throw new Error('build: the artifact does not start with its banner and end with its footer')
  const { code } = await minify(bundled.slice(head.length, -tail.length), TERSER_OPTIONS)
  await writeFile(ARTIFACT, head + code! + tail)
  await writeFile(METAFILE, JSON.stringify(result.metafile))
  await writeNotices()
  return result.metafile
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
 * Block length matters here: the artifact's 20 KB of base64 (the packed llhttp module) shares a
 * block, and its Huffman table, with code (on 2026-12-01 the two measures differed by 1.4 KB).
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
