import assert from 'node:assert/strict'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import {
  buildGroupsFor,
  cachedBinaryDir,
  readVersions,
  resolveBinaries,
  TEST_ASSETS_ENV,
} from '../../src/testing/assets.ts'

let root: string
const quiet = () => {}

/** A directory with fake executables of `names`. */
async function binDir(dir: string, names: readonly string[]): Promise<string> {
  await mkdir(dir, { recursive: true })
  for (const name of names) {
    await writeFile(join(dir, name), '#!/bin/sh\n')
    await chmod(join(dir, name), 0o755)
  }
  return dir
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'edgeop-assets-test-'))
})
after(async () => {
  await rm(root, { recursive: true, force: true })
})

test('EDGEOP_TEST_ASSETS wins over a complete build cache', async () => {
  const assets = await binDir(join(root, 'a1/assets'), ['etcd', 'kube-apiserver'])
  const cache = join(root, 'a1/cache')
  await binDir(cachedBinaryDir(readVersions(), { EDGEOP_BUILD_CACHE_DIR: cache }), ['etcd', 'kube-apiserver'])
  const b = await resolveBinaries({
    env: { [TEST_ASSETS_ENV]: assets, EDGEOP_BUILD_CACHE_DIR: cache },
    log: quiet,
  })
  assert.equal(b.dir, assets)
  assert.equal(b.path('etcd'), join(assets, 'etcd'))
})

test('EDGEOP_TEST_ASSETS lacking a binary fails naming it, without falling back to the cache', async () => {
  const assets = await binDir(join(root, 'a2/assets'), ['etcd'])
  const cache = join(root, 'a2/cache')
  await binDir(cachedBinaryDir(readVersions(), { EDGEOP_BUILD_CACHE_DIR: cache }), ['etcd', 'kube-apiserver'])
  await assert.rejects(
    resolveBinaries({ env: { [TEST_ASSETS_ENV]: assets, EDGEOP_BUILD_CACHE_DIR: cache }, log: quiet }),
    (err: Error & { code?: string }) =>
      err.code === 'EDGEOP_ERR_CONFIG' && /has no executable kube-apiserver/.test(err.message),
  )
})

test('without EDGEOP_TEST_ASSETS the cache under EDGEOP_BUILD_CACHE_DIR is used, keyed by the versions', async () => {
  const cache = join(root, 'a3/cache')
  const dir = await binDir(cachedBinaryDir(readVersions(), { EDGEOP_BUILD_CACHE_DIR: cache }), [
    'etcd',
    'kube-apiserver',
  ])
  assert.match(dir, /bin\/k8s-[\d.]+-etcd-[\d.]+-kwok-[\d.]+$/)
  const b = await resolveBinaries({ env: { EDGEOP_BUILD_CACHE_DIR: cache }, log: quiet })
  assert.equal(b.dir, dir)
})

test('an incomplete cache and no Go: one error naming both ways to provide the binaries', async () => {
  const cache = join(root, 'a4/cache')
  await binDir(cachedBinaryDir(readVersions(), { EDGEOP_BUILD_CACHE_DIR: cache }), ['etcd'])
  await assert.rejects(
    resolveBinaries({ env: { EDGEOP_BUILD_CACHE_DIR: cache, PATH: join(root, 'no-go') }, log: quiet }),
    (err: Error & { code?: string; step?: string }) => {
      assert.equal(err.code, 'EDGEOP_ERR_CONFIG')
      assert.equal(err.step, 'resolve control-plane binaries')
      assert.match(err.message, /set EDGEOP_TEST_ASSETS to a directory holding etcd kube-apiserver/)
      assert.match(err.message, /install Go >= 1\.26/)
      assert.match(err.message, /build-binaries\.sh/)
      return true
    },
  )
})

test('only the build groups that make the needed binaries are built', () => {
  assert.deepEqual(buildGroupsFor(['etcd', 'kube-apiserver']), ['etcd', 'k8s'])
  assert.deepEqual(buildGroupsFor(['kwok']), ['kwok'])
  assert.deepEqual(buildGroupsFor(['etcd', 'etcdctl', 'kube-scheduler', 'kwok']), ['etcd', 'k8s', 'kwok'])
})
