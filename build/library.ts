/**
 * @module build/library — the library build's esbuild options (dist/lib: one ESM entry per subpath, shared
 * chunks, undici and zod external), shared by `npm run build` and the tests that read its module graph.
 */
import { join } from 'node:path'
import type * as esbuild from 'esbuild'

/** Every subpath of package.json "exports" but the root (`index`), by its entry file name in dist/lib. */
export const SUBPATHS = [
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

/** esbuild options of dist/lib, written under `root`. */
export function libraryBuildOptions(root: string): esbuild.BuildOptions {
  return {
    entryPoints: Object.fromEntries([
      ['index', join(root, 'src/index.ts')],
      // The package's `edgeop` command (`npx edgeop init`); the operator binary is dist/edgeop.cjs.
      ['bin', join(root, 'src/cli/bin.ts')],
      ...SUBPATHS.map((s) => [
        s,
        join(root, `src/${SUBPATH_DIRS[s as keyof typeof SUBPATH_DIRS] ?? s}/index.ts`),
      ]),
    ]),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    outdir: join(root, 'dist/lib'),
    chunkNames: 'chunks/[name]-[hash]',
    external: ['undici', 'undici/*', 'zod', 'zod/*', 'esbuild'],
    logLevel: 'warning',
  }
}
