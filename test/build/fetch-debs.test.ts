/**
 * build/tools/fetch-debs.sh (via build/tools/debian.ts) without the network: usage errors are
 * refused with exit 2 before apt runs, a cached root for the same packages is used without
 * apt-get at all, and a different package list is not mistaken for the cached one.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { FETCH_DEBS, fetchDebs } from '../../build/tools/debian.ts'

const scratch: string[] = []
after(async () => {
  for (const d of scratch) await rm(d, { recursive: true, force: true })
})
/** A cache whose `name` root was fetched for `packages`, and an environment without apt-get. */
async function cachedRoot(name: string, packages: string): Promise<{ env: NodeJS.ProcessEnv; root: string }> {
  const cache = await mkdtemp(join(tmpdir(), 'edgeop-debs-'))
  scratch.push(cache)
  const suite = /^DEBIAN_SUITE=(\S+)$/m.exec(await readFile(join(FETCH_DEBS, '../versions.env'), 'utf8'))![1]!
  const root = join(cache, `debian-${suite}`, name)
  await mkdir(root, { recursive: true })
  await writeFile(join(root, '.packages'), `${packages}\n`)
  // A PATH with bash and the coreutils the script uses, but no apt-get or dpkg-deb.
  const bin = join(cache, 'bin')
  await mkdir(bin)
  for (const tool of ['bash', 'dirname', 'cat']) await symlink(which(tool), join(bin, tool))
  return { env: { PATH: bin, EDGEOP_BUILD_CACHE_DIR: cache, HOME: '/nonexistent' }, root }
}
const which = (tool: string): string =>
  execFileSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim()
const bash = which('bash')

test('a cached root for the same packages is used without apt-get', async () => {
  const { env, root } = await cachedRoot('sysroot-test', 'libc6:arm64 ')
  assert.equal(fetchDebs({ name: 'sysroot-test', packages: ['libc6:arm64'] }, env), root)
})

test('another package list is a cache miss (here: loud, because apt-get is absent)', async () => {
  const { env } = await cachedRoot('sysroot-test', 'libc6:arm64 ')
  assert.throws(
    () => fetchDebs({ name: 'sysroot-test', packages: ['libc6:arm64', 'libgcc-s1:arm64'] }, env),
    /Debian packages libc6:arm64 libgcc-s1:arm64 are unavailable/,
  )
})

test('usage errors exit 2 with the reason: no packages, a name that could leave the cache', () => {
  for (const args of [['only-a-name'], ['../etc', 'libc6:arm64']]) {
    const r = spawnSync(bash, [FETCH_DEBS, ...args], { encoding: 'utf8' })
    assert.equal(r.status, 2, args.join(' '))
    assert.match(r.stderr, /usage: fetch-debs|must be \[a-z0-9-\]/)
  }
})
