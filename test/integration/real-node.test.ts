/**
 * A real node, not KWOK: test/node/probe-node.sh brings up the project's control plane, containerd
 * with the CRI and the CNI bridge, and kubelet (all built by test/node/build-binaries.sh) inside a
 * network and mount namespace of its own, imports the images from dist/image with no registry, runs
 * two static pods of the operator's image, reports, and tears everything down. The suite of the
 * chart installed as shipped on this node is still to come (docs/real-node.md).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { access, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { before, test } from 'node:test'
import { promisify } from 'node:util'
import { buildImages, inspectImage } from '../../build/image.ts'
import { HOST_ARCH } from '../../build/targets.ts'
import { nodeBinaryDir } from '../node/assets.ts'
import { memoryBytes } from '../node/quantity.ts'
import { scratchDirs } from '../support/scratch.ts'

const run = promisify(execFile)
const scratch = scratchDirs('edgeop-real-node-')
const PROBE = new URL('../node/probe-node.sh', import.meta.url).pathname

/** The node's binaries from the Go module proxy on a cold machine (containerd alone took 540 s wall on a loaded one), then the images if missing. */
const PREPARE_TIMEOUT_MS = 1_800_000
/** How long the probe waits for the Node to be Ready (it was 4 to 8 s after kubelet's start). */
const READY_WAIT_S = 120

before(
  async () => {
    await nodeBinaryDir('all')
    if ((await inspectImage('node', HOST_ARCH).catch(() => undefined)) === undefined) await buildImages()
  },
  { timeout: PREPARE_TIMEOUT_MS },
)

test('kubelet registers a Ready node and runs static pods of the image from the OCI layout: `version` Succeeded with its line, an idle pod Running on the CNI bridge at its memory limit; all torn down', async () => {
  const { stdout } = await run('bash', [PROBE, String(READY_WAIT_S)], {
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, EDGEOP_NODE_PROBE_DIR: await scratch() },
  })
  assert.match(stdout, /probe-node: \d+ ms: node edgeop-node Ready=True$/m, stdout)
  assert.match(stdout, /edgeop-version-edgeop-node=Succeeded/, stdout)
  assert.match(stdout, /edgeop-idle-edgeop-node=Running@10\.88\.\d+\.\d+/, stdout)
  assert.match(
    stdout,
    /version pod's log: \S+ stdout F edgeop \d+\.\d+\.\d+ \(node v24\.[^,]*, linux\/(?:x64|arm64), --optimize-for-size\)$/m,
    stdout,
  )
  for (const limit of ['64Mi', '384Mi'])
    assert.match(stdout, new RegExp(`memory limit ${memoryBytes(limit)}$`, 'm'), stdout)
  assert.match(stdout, /probe-node: \d+ ms: torn down/, stdout)
  // cgroup v1 is not namespaced: the kubelet's tree went into the machine's hierarchies, and is gone.
  const root = /cgroup root (\/edgeop-node-\d+)$/m.exec(stdout)?.[1]
  assert.ok(root, stdout)
  for (const hierarchy of await readdir('/sys/fs/cgroup'))
    await assert.rejects(access(join('/sys/fs/cgroup', hierarchy, root)), `${hierarchy}${root} is left`)
})
