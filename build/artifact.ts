/**
 * @module build/artifact — esbuild settings for the single-file operator artifact.
 *
 * One CommonJS file (a single executable needs CJS on Node 22/24), minified, with every
 * dependency inlined, undici trimmed (src/esbuild/undici-trims.ts, build/undici-trims.ts). Its
 * largest trim: undici's HTTP/1.1 client and the llhttp WebAssembly parser it loads are stubbed
 * out (`noHttp1Client`), since the client sends HTTP/1.1 through `node:http` and uses undici for
 * HTTP/2 only (measured 2026-12-01: see test/build/artifact.test.ts).
 * After esbuild, terser minifies the code once more ({@link TERSER_OPTIONS}).
 */
import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import * as esbuild from 'esbuild'
import { type MinifyOptions, minify } from 'terser'
import { UNDICI_DEFINE, UNDICI_TRIMS } from '../src/esbuild/undici-trims.ts'
import {
  HEADER_NAME_TABLES,
  REQUEST_BODY_WRITERS,
  UNREFERENCED_EXPORTS,
  UNSET_OPTIONS,
  UPGRADE_AND_CONNECT,
  undiciTrims,
} from './undici-trims.ts'

export const ROOT = join(dirname(new URL(import.meta.url).pathname), '..')
export const ARTIFACT = join(ROOT, 'dist/edgeop.cjs')
export const METAFILE = join(ROOT, 'dist/edgeop.meta.json')

/** The esbuild plugins that trim undici for the artifact (also used by tests that bundle with them). */
export const ARTIFACT_PLUGINS: readonly esbuild.Plugin[] = [
  ...UNDICI_TRIMS,
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
  const result = await esbuild.build({ ...options, write: false })
  const bundled = result.outputFiles[0]!.text
  const head = `${options.banner!.js!}\n`
  if (!bundled.startsWith(head)) throw new Error('build: the artifact does not start with its banner')
  const { code } = await minify(bundled.slice(head.length), TERSER_OPTIONS)
  await writeFile(ARTIFACT, `${head}${code!}\n`)
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
