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
 */
import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import * as esbuild from 'esbuild'

export const ROOT = join(dirname(new URL(import.meta.url).pathname), '..')
export const ARTIFACT = join(ROOT, 'dist/edgeop.cjs')
export const METAFILE = join(ROOT, 'dist/edgeop.meta.json')

const NO_SIMD_FALLBACK: esbuild.Plugin = {
  name: 'llhttp-no-simd-fallback',
  setup(b) {
    b.onLoad({ filter: /llhttp[\\/]llhttp-wasm\.js$/ }, () => ({
      contents:
        "throw new Error('edgeop: this build parses HTTP/1.1 with WebAssembly SIMD; this CPU has none (use HTTP/2 or a full undici build)')",
      loader: 'js',
    }))
  },
}

/** Builds dist/edgeop.cjs from src/main.ts; returns the metafile. */
export async function buildArtifact(): Promise<esbuild.Metafile> {
  await mkdir(dirname(ARTIFACT), { recursive: true })
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }
  const result = await esbuild.build({
    entryPoints: [join(ROOT, 'src/main.ts')],
    bundle: true,
    minify: true,
    format: 'cjs',
    platform: 'node',
    target: 'node22',
    outfile: ARTIFACT,
    metafile: true,
    legalComments: 'none',
    define: { esbuildDetection: '"edgeop"' },
    banner: {
      js: `/* edgeop ${pkg.version} — bundles undici and zod (MIT); notices: dist/THIRD-PARTY-NOTICES */`,
    },
    plugins: [NO_SIMD_FALLBACK],
    logLevel: 'warning',
  })
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

/** Size summary of the artifact as built. */
export async function artifactSize(): Promise<{ bytes: number; gzip: number; sha256: string }> {
  const buf = await readFile(ARTIFACT)
  return {
    bytes: buf.length,
    gzip: gzipSync(buf, { level: 9 }).length,
    sha256: createHash('sha256').update(buf).digest('hex'),
  }
}
