/**
 * @module build/package-consumer — edgeop as a user gets it: packed from a clean checkout,
 * installed into a fresh project, and bundled there with esbuild and rolldown.
 *
 * Shared by test/build/package.test.ts (does it work), test/integration/bundled-examples.test.ts
 * (do the bundled examples run against an apiserver) and build/library-size.ts (what it costs).
 * Network: only the npm registry (npm's cache first: `--prefer-offline`).
 */
import { execFile } from 'node:child_process'
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { gzipSync } from 'node:zlib'
import * as esbuild from 'esbuild'
import { rolldown } from 'rolldown'
import { docExample, LIBRARY_CONTROLLER_EXAMPLE } from './doc-examples.ts'

const ROOT = join(import.meta.dirname, '..')
const run = promisify(execFile)

/** gzip level for every size edgeop reports (the artifact test uses the same). */
const GZIP_LEVEL = 9

/**
 * `git archive HEAD` into `<work>/checkout` (committed files only), with this checkout's
 * node_modules linked in for the build tools, then `npm pack` there, which runs `prepack`
 * (`node build/build.ts --library`). Resolves with the tarball's path.
 */
export async function packCleanCheckout(work: string): Promise<string> {
  const checkout = checkoutOf(work)
  await mkdir(checkout, { recursive: true })
  await run('sh', ['-c', `git -C "${ROOT}" archive --format=tar HEAD | tar -x -C "${checkout}"`])
  await symlink(join(ROOT, 'node_modules'), join(checkout, 'node_modules'), 'dir')
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: checkout,
    maxBuffer: 16 * 1024 * 1024,
  })
  const [info] = JSON.parse(stdout) as { filename: string }[]
  if (!info) throw new Error('npm pack printed no tarball')
  return join(work, info.filename)
}

/** Where {@link packCleanCheckout} extracts the checkout under `work`. */
const checkoutOf = (work: string): string => join(work, 'checkout')

/** What {@link packedConsumer} made under its work directory. */
export interface PackedConsumer {
  /** The clean checkout of HEAD that was packed (committed files only; examples/ included). */
  checkout: string
  /** The tarball `npm pack` wrote. */
  tarball: string
  /** The consumer project (`<work>/consumer`) with the tarball installed. */
  project: string
}

/**
 * {@link packCleanCheckout} under `work`, then {@link consumerProject} in `<work>/consumer`
 * (with the `extra` packages linked): edgeop packed and installed once, as a user gets it.
 */
export async function packedConsumer(work: string, extra: string[] = []): Promise<PackedConsumer> {
  const tarball = await packCleanCheckout(work)
  const project = join(work, 'consumer')
  await consumerProject(project, tarball, extra)
  return { checkout: checkoutOf(work), tarball, project }
}

/** The file list of a packed tarball (paths inside `package/`). */
export async function tarballFiles(tarball: string): Promise<string[]> {
  const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 16 * 1024 * 1024 })
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''))
}

/**
 * A new npm project in `dir` with the tarball installed as a user would (`npm install
 * ./edgeop-x.tgz`). `extra` packages of this checkout (e.g. `@kubernetes/client-node`, for
 * comparison) are linked into its node_modules afterwards.
 */
export async function consumerProject(dir: string, tarball: string, extra: string[] = []): Promise<void> {
  await mkdir(dir, { recursive: true })
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  )
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], { cwd: dir })
  for (const name of extra) {
    const top = name.startsWith('@') ? name.split('/')[0]! : name
    await symlink(join(ROOT, 'node_modules', top), join(dir, 'node_modules', top), 'dir').catch(() => {})
  }
}

/** Type-checks `files` of the consumer project with this checkout's tsc (strict, nodenext). */
export async function typecheckConsumer(dir: string, files: string[]): Promise<void> {
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2023',
        lib: ['es2023'],
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')],
      },
      files,
    }),
  )
  await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir })
}

/** How a user bundles: esbuild (plain or with the `edgeop()` plugin) or rolldown. */
export type Bundler = 'esbuild' | 'esbuild+plugin' | 'rolldown'

/** A bundle written by {@link bundle}. */
export interface BundleResult {
  /** The output file. */
  file: string
  /** Its size in bytes. */
  bytes: number
  /** Its size gzipped (level 9). */
  gzip: number
  /** esbuild only: output bytes by origin package (`edgeop`, `undici`, `zod`, … or `(app)`). */
  byOrigin?: Record<string, number>
}

/** Output bytes of an esbuild metafile by origin package (the name after the last node_modules/). */
export function originBytes(meta: esbuild.Metafile): Record<string, number> {
  const out: Record<string, number> = {}
  for (const output of Object.values(meta.outputs))
    for (const [file, info] of Object.entries(output.inputs)) {
      const m = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)
      const key = m ? m[1]! : '(app)'
      out[key] = (out[key] ?? 0) + info.bytesInOutput
    }
  return out
}

/**
 * Bundles `entry` (a file of the consumer project in `dir`) minified for Node, as `format`,
 * into `<dir>/out/`, optionally with a `banner` line (esbuild only). `esbuild+plugin` loads `edgeop/esbuild` from the installed package, as a
 * user's build script would.
 */
export async function bundle(
  dir: string,
  entry: string,
  bundler: Bundler,
  format: 'esm' | 'cjs',
  options: { banner?: string } = {},
): Promise<BundleResult> {
  const tag = `${bundler.replace('+', '-')}${options.banner ? '-banner' : ''}`
  const name = `${entry.replace(/\.[^.]+$/, '')}.${tag}.${format === 'esm' ? 'mjs' : 'cjs'}`
  const file = join(dir, 'out', name)
  let byOrigin: Record<string, number> | undefined
  if (bundler === 'rolldown') {
    const build = await rolldown({ input: join(dir, entry), platform: 'node', cwd: dir, logLevel: 'silent' })
    await build.write({ file, format, minify: true })
    await build.close()
  } else {
    const plugins: esbuild.Plugin[] = []
    if (bundler === 'esbuild+plugin') {
      const shipped = (await import(join(dir, 'node_modules/edgeop/dist/lib/esbuild.js'))) as {
        edgeop: () => esbuild.Plugin
      }
      plugins.push(shipped.edgeop())
    }
    const result = await esbuild.build({
      entryPoints: [join(dir, entry)],
      absWorkingDir: dir,
      bundle: true,
      minify: true,
      platform: 'node',
      target: 'node22',
      format,
      outfile: file,
      metafile: true,
      legalComments: 'none',
      logLevel: 'silent',
      plugins,
      ...(options.banner ? { banner: { js: options.banner } } : {}),
    })
    byOrigin = originBytes(result.metafile)
  }
  const buf = await readFile(file)
  return {
    file,
    bytes: buf.length,
    gzip: gzipSync(buf, { level: GZIP_LEVEL }).length,
    ...(byOrigin ? { byOrigin } : {}),
  }
}

/** Bytes on disk under `dir` (apparent file sizes, symlinks not followed), as `du -sb` counts them. */
export async function diskBytes(dir: string): Promise<number> {
  let total = 0
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) total += await diskBytes(p)
    else if (e.isFile()) total += (await stat(p)).size
  }
  return total
}

/** The mirror controller of docs/library.md ("Write your own controller"), as a user would paste it. */
export const mirrorControllerExample = (): Promise<string> => docExample(ROOT, LIBRARY_CONTROLLER_EXAMPLE)
