/**
 * Where the real test node's binaries come from (test/node/build-binaries.sh): each version in
 * versions.env is the one its go.mod pins (the cache key matches the build), kubelet is built from
 * the control plane's own Kubernetes module, `EDGEOP_NODE_ASSETS` is used as given or refused with
 * a reason, and without Go or a cached build the failure is loud.
 */
import assert from 'node:assert/strict'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { noGo, scratchDirs } from '../support/scratch.ts'
import { BUILD_NODE_BINARIES, nodeBinaryDir } from './assets.ts'

const HERE = import.meta.dirname
const tempDir = scratchDirs('edgeop-node-binaries-')
const NEED = [
  'kubelet',
  'containerd',
  'ctr',
  'containerd-shim-runc-v2',
  'runc',
  'cni/bridge',
  'cni/host-local',
  'cni/loopback',
  'cni/portmap',
]

const versionOf = async (file: string, name: string): Promise<string> => {
  const v = new RegExp(`^${name}=(\\S+)$`, 'm').exec(await readFile(file, 'utf8'))?.[1]
  assert.ok(v, `${file} has ${name}`)
  return v
}

test('versions.env names the versions the go.mod files pin (the cache key matches the build)', async () => {
  const env = join(HERE, 'versions.env')
  for (const [name, dir, module] of [
    ['CONTAINERD_VERSION', 'containerd', 'github.com/containerd/containerd/v2'],
    ['RUNC_VERSION', 'runc', 'github.com/opencontainers/runc'],
    ['CNI_PLUGINS_VERSION', 'cni', 'github.com/containernetworking/plugins'],
  ] as const) {
    const version = await versionOf(env, name)
    const gomod = await readFile(join(HERE, 'go', dir, 'go.mod'), 'utf8')
    assert.match(
      gomod,
      new RegExp(`^\\s*${module.replaceAll('.', '\\.')} v${version.replaceAll('.', '\\.')}\\b`, 'm'),
      name,
    )
  }
})

test('kubelet is a tool of the control plane Kubernetes module, at the apiserver version', async () => {
  const gomod = await readFile(join(HERE, '../controlplane/go/k8s/go.mod'), 'utf8')
  const k8s = await versionOf(join(HERE, '../controlplane/versions.env'), 'KUBERNETES_VERSION')
  assert.match(gomod, /^\s*k8s\.io\/kubernetes\/cmd\/kubelet$/m)
  assert.match(gomod, new RegExp(`^\\s*k8s\\.io\\/kubernetes v${k8s.replaceAll('.', '\\.')}\\b`, 'm'))
})

test('EDGEOP_NODE_ASSETS with every binary is used as is, without Go', async () => {
  const dir = await tempDir()
  for (const name of NEED) {
    await mkdir(join(dir, name, '..'), { recursive: true })
    await writeFile(join(dir, name), '#!/bin/sh\n')
    await chmod(join(dir, name), 0o755)
  }
  assert.equal(await nodeBinaryDir('all', noGo({ EDGEOP_NODE_ASSETS: dir })), dir)
})

test('EDGEOP_NODE_ASSETS without one of the binaries is refused', async () => {
  const dir = await tempDir()
  for (const name of NEED.filter((n) => n !== 'cni/portmap')) {
    await mkdir(join(dir, name, '..'), { recursive: true })
    await writeFile(join(dir, name), '#!/bin/sh\n')
    await chmod(join(dir, name), 0o755)
  }
  const err = await nodeBinaryDir('all', noGo({ EDGEOP_NODE_ASSETS: dir })).then(
    () => assert.fail('accepted'),
    (e: Error) => e,
  )
  assert.match(err.message, /binaries are unavailable: .*build-binaries\.sh failed/)
})

test('no cached build and no Go: a loud failure, not a silent skip', async () => {
  const cache = await tempDir()
  await assert.rejects(nodeBinaryDir('runc', noGo({ EDGEOP_BUILD_CACHE_DIR: cache })), (e: Error) =>
    e.message.includes(BUILD_NODE_BINARIES),
  )
})
