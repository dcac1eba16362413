/**
 * @module build/build — `npm run build`: the library and the operator artifact.
 *
 *     node build/build.ts [--library]   (--library: dist/lib and dist/types only; `npm pack` runs it)
 *
 *   dist/lib/*.js          ESM, one entry per subpath (core, config, client, watch, cache,
 *                          queue, leader, objects, metrics, health, logging, server, tls, controller, manager, testing, resilience, sharding,
 *                          tracing, webhook, and
 *                          esbuild: the bundle-time plugin) with shared chunks; undici and zod external
 *   dist/types/**.d.ts     declarations (tsc --emitDeclarationOnly)
 *   dist/edgeop.cjs        the operator: one file, minified, dependencies inlined
 *   dist/edgeop.meta.json  esbuild metafile of the artifact (bytes by input)
 */
import { execFileSync } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import * as esbuild from 'esbuild'
import { artifactSize, buildArtifact, bytesByOrigin, ROOT } from './artifact.ts'
import { libraryBuildOptions } from './library.ts'

async function buildLibrary(): Promise<void> {
  await rm(join(ROOT, 'dist/lib'), { recursive: true, force: true })
  await rm(join(ROOT, 'dist/types'), { recursive: true, force: true })
  await esbuild.build(libraryBuildOptions(ROOT))
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json')],
    { stdio: 'inherit' },
  )
}

const started = performance.now()
await buildLibrary()
if (!process.argv.includes('--library')) {
  const meta = await buildArtifact()
  const size = await artifactSize()
  const origins = Object.entries(bytesByOrigin(meta)).sort((a, b) => b[1] - a[1])
  process.stdout.write(
    `dist/edgeop.cjs: ${size.bytes} bytes, ${size.gzip} gzip -9 (${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
  )
  for (const [origin, bytes] of origins)
    process.stdout.write(`  ${origin.padEnd(16)} ${String(bytes).padStart(8)} bytes minified\n`)
}
