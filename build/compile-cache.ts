/**
 * @module build/compile-cache — Node's module compile cache for the `node` image, made at build time.
 *
 * Node looks the cache up in `$NODE_COMPILE_CACHE/v<node>-<arch>-<V8 flag hash>-<uid>/`, keyed (with
 * `NODE_COMPILE_CACHE_PORTABLE=1`) by the module's path relative to that directory, and V8 accepts it
 * only when the source and the V8 flags are those it was made with. So the cache is made by the
 * image's own Node binary (arm64 under qemu), under the shipped flags (build/node-flags.ts), beside
 * the artifact at the path it has in the image, and its directory is renamed to the image user's
 * uid. At run time the directory is only read: root-owned, world-readable, so a read-only root
 * filesystem changes nothing (a Node that finds no cache for its flags or uid fails to create one
 * there and runs on, silently).
 *
 * Measured 2026-12-01 (40 interleaved runs of `edgeop version` under `--optimize-for-size`, CPU time
 * median): 109 ms with the cache, 118 ms without.
 */
import { spawnSync } from 'node:child_process'
import { chmod, readdir, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { NODE_FLAGS } from './node-flags.ts'
import { type Arch, commandFor } from './targets.ts'

/** The cache's directory name, beside the artifact (/app/compile-cache in the image). */
export const COMPILE_CACHE_DIR = 'compile-cache'

/** The image environment that makes Node read the cache (absolute: Node resolves it against the working directory). */
export const compileCacheEnv = (appDir: string): Record<string, string> => ({
  NODE_COMPILE_CACHE: join(appDir, COMPILE_CACHE_DIR),
  NODE_COMPILE_CACHE_PORTABLE: '1',
})

/**
 * Runs `<node> <NODE_FLAGS> <appDir>/edgeop.cjs version` (for `arch`, under qemu when foreign) so that
 * Node writes the artifact's compile cache to `<appDir>/compile-cache`, then names it for `uid` and
 * makes it readable by everyone; returns the cache's versioned directory name. Throws when the run
 * fails or writes no cache.
 */
export async function writeCompileCache(
  arch: Arch,
  node: string,
  appDir: string,
  uid: number,
): Promise<string> {
  const [cmd, ...args] = commandFor(arch, [node, ...NODE_FLAGS, join(appDir, 'edgeop.cjs'), 'version'])
  const ran = spawnSync(cmd!, args, {
    encoding: 'utf8',
    env: { ...process.env, ...compileCacheEnv(appDir) },
  })
  if (ran.status !== 0 || ran.stderr !== '') {
    throw new Error(`compile cache: edgeop version exited ${ran.status}: ${ran.stderr}`)
  }
  const root = join(appDir, COMPILE_CACHE_DIR)
  const made = await readdir(root)
  const builder = `-${process.getuid?.() ?? 0}`
  if (made.length !== 1 || !made[0]!.endsWith(builder)) {
    throw new Error(
      `compile cache: expected one directory ending in ${builder} in ${root}, found ${made.join(', ')}`,
    )
  }
  const named = `${made[0]!.slice(0, -builder.length)}-${uid}`
  if (named !== made[0]) await rename(join(root, made[0]!), join(root, named))
  // Node writes the cache 0600; the image runs as another user than the builder.
  await chmod(root, 0o755)
  await chmod(join(root, named), 0o755)
  const files = await readdir(join(root, named))
  if (files.length === 0) throw new Error(`compile cache: Node wrote no cache to ${join(root, named)}`)
  for (const f of files) await chmod(join(root, named, f), 0o644)
  return named
}
