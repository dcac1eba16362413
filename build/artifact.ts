/**
 * @module build/artifact — esbuild settings for the single-file operator artifact.
 *
 * One CommonJS file (a single executable needs CJS on Node 22/24), minified, with every
 * dependency inlined. The undici trims (Milo left out, the non-SIMD llhttp fallback, the
 * FormData layer and llhttp's tables dropped, the SIMD wasm brotli-packed) live in
 * src/esbuild/, shipped as `edgeop/esbuild` so that users' bundles get them too.
 */
import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import * as esbuild from 'esbuild'
import { UNDICI_DEFINE, UNDICI_TRIMS } from '../src/esbuild/undici-trims.ts'

export const ROOT = join(dirname(new URL(import.meta.url).pathname), '..')
export const ARTIFACT = join(ROOT, 'dist/edgeop.cjs')
export const METAFILE = join(ROOT, 'dist/edgeop.meta.json')

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
    define: { ...UNDICI_DEFINE },
    banner: {
      js: `/* edgeop ${pkg.version} — bundles undici and zod (MIT); notices: dist/THIRD-PARTY-NOTICES */`,
    },
    plugins: [...UNDICI_TRIMS],
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
