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

const SUBPATHS = [
  'core',
  'api',
  'config',
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
  'operator',
  'testing',
  'resilience',
  'sharding',
  'tracing',
  'protobuf',
  'webhook',
  'esbuild',
] as const

/** Subpaths whose room is not a top-level folder of src/. */
const SUBPATH_DIRS = { protobuf: 'codec/protobuf' } as const

async function buildLibrary(): Promise<void> {
  await rm(join(ROOT, 'dist/lib'), { recursive: true, force: true })
  await rm(join(ROOT, 'dist/types'), { recursive: true, force: true })
  await esbuild.build({
    entryPoints: Object.fromEntries([
      ['index', join(ROOT, 'src/index.ts')],
      // The package's `edgeop` command (`npx edgeop init`); the operator binary is dist/edgeop.cjs.
      ['bin', join(ROOT, 'src/cli/bin.ts')],
      ...SUBPATHS.map((s) => [
        s,
        join(ROOT, `src/${SUBPATH_DIRS[s as keyof typeof SUBPATH_DIRS] ?? s}/index.ts`),
      ]),
    ]),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    outdir: join(ROOT, 'dist/lib'),
    chunkNames: 'chunks/[name]-[hash]',
    external: ['undici', 'undici/*', 'zod', 'zod/*', 'esbuild'],
    logLevel: 'warning',
  })
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
