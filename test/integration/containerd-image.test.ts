/**
 * The operator's images get into containerd (test/node/build-binaries.sh builds it, with its runc
 * shim and runc) from the OCI layout of `npm run build:image`, tarred as it is, with no registry;
 * and containerd runs the `node` image of this machine's architecture through the shim with a
 * read-only root filesystem and the chart's memory limit, as the image's user (read back from
 * /proc and the container's memory cgroup). containerd runs in
 * a mount and network namespace of its own (test/node/containerd.ts), its container in a network
 * namespace holding only a loopback.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { archTag, buildImages, inspectImage, LAYOUT, NONROOT } from '../../build/image.ts'
import { HOST_ARCH } from '../../build/targets.ts'
import { nodeBinaryDir } from '../node/assets.ts'
import { type Containerd, startContainerd } from '../node/containerd.ts'
import { memoryBytes } from '../node/quantity.ts'
import { cgroupMemory } from '../node/runc.ts'
import { helmTemplate, operatorShape } from '../support/rendered-manifests.ts'
import { scratchDirs } from '../support/scratch.ts'

const scratch = scratchDirs('edgeop-containerd-')

/**
 * containerd and runc built from the Go module proxy on a cold machine (182 s and 45 s of CPU on 2
 * cores, 540 s and 96 s wall on a loaded one), then the images if no earlier test built them.
 */
const PREPARE_TIMEOUT_MS = 1_200_000
/** The name the layout's tags are imported under (`<base>:<tag>`): local, never pulled. */
const BASE_NAME = 'localhost/edgeop'

let containerd: Containerd | undefined
let work: string
let memoryLimitBytes: number
let entrypoint: readonly string[]

before(
  async () => {
    await nodeBinaryDir('containerd')
    const bin = await nodeBinaryDir('runc')
    if ((await inspectImage('node', HOST_ARCH).catch(() => undefined)) === undefined) await buildImages()
    work = await scratch()
    containerd = await startContainerd(bin, join(work, 'containerd'))
    // `npm run build:image` writes this archive too: the layout, tarred as it is.
    const archive = join(work, 'edgeop-oci.tar')
    execFileSync('tar', ['-C', LAYOUT, '-cf', archive, '.'])
    await containerd.ctr(['images', 'import', '--base-name', BASE_NAME, archive])
    const shape = operatorShape(await helmTemplate('edgeop', 'edgeop-system'))
    memoryLimitBytes = memoryBytes((shape.resources as { limits: { memory: string } }).limits.memory)
    entrypoint = (await inspectImage('node', HOST_ARCH)).config.Entrypoint ?? []
  },
  { timeout: PREPARE_TIMEOUT_MS },
)
after(() => containerd?.stop())

test('the OCI layout imports into containerd with no registry: every tag, under localhost/edgeop', async () => {
  const names = (await containerd!.ctr(['images', 'list', '--quiet'])).trim().split('\n')
  assert.ok(names.includes(`${BASE_NAME}:node`), names.join(', '))
  assert.ok(names.includes(`${BASE_NAME}:${archTag('node', HOST_ARCH)}`), names.join(', '))
})

/** `ctr run` of the host architecture's `node` image, read-only and at the chart's memory limit. */
const runArgs = (id: string, detach: boolean, args: readonly string[]): string[] => [
  'run',
  ...(detach ? ['--detach'] : ['--rm']),
  '--fifo-dir',
  join(work, 'fifo'),
  '--read-only',
  '--memory-limit',
  String(memoryLimitBytes),
  `${BASE_NAME}:${archTag('node', HOST_ARCH)}`,
  id,
  ...args,
]

test("containerd runs the node image's `version` through the runc shim", async () => {
  const out = await containerd!.ctr(runArgs('edgeop-version', false, [...entrypoint, 'version']))
  assert.match(out, /^edgeop \d+\.\d+\.\d+ \(node v24\.[^,]*, linux\/(?:x64|arm64), --optimize-for-size\)$/m)
})

test("a container of the image runs as its user 65532, read-only, in a memory cgroup at the chart's limit", async () => {
  const id = 'edgeop-idle'
  // The image's Node, kept alive: the image has no shell and no sleep.
  await containerd!.ctr(runArgs(id, true, [entrypoint[0]!, '-e', 'setInterval(() => {}, 60_000)']))
  try {
    const task = (await containerd!.ctr(['tasks', 'list'])).split('\n').find((l) => l.startsWith(`${id} `))
    const pid = Number(task?.trim().split(/\s+/)[1])
    assert.ok(pid > 0, `a task ${id} with a pid: ${task}`)
    const status = await readFile(`/proc/${pid}/status`, 'utf8')
    assert.match(status, new RegExp(`^Uid:\\s+${NONROOT}\\s+${NONROOT}\\s`, 'm'))
    const root = (await readFile(`/proc/${pid}/mountinfo`, 'utf8'))
      .split('\n')
      .find((l) => l.split(' ')[4] === '/')
    assert.match(root?.split(' ')[5] ?? '', /^ro(,|$)/, `the container's / is read-only: ${root}`)
    // ctr's cgroup for a container: /<containerd namespace>/<id>.
    assert.equal((await cgroupMemory(`/${containerd!.namespace}/${id}`)).limit, memoryLimitBytes)
  } finally {
    await containerd!.ctr(['tasks', 'delete', '--force', id])
    await containerd!.ctr(['containers', 'delete', id])
  }
})
