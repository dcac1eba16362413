/**
 * The container images, built without a Docker engine (build/image.ts with umoci from the
 * Go module proxy, read back by build/oci-layout.ts): config, size, no shell, and the
 * entrypoint really runs in its own rootfs as the nonroot user. Needs dist/edgeop.cjs and
 * dist/edgeop (npm test builds both) and Go for umoci's first build.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { ROOT } from '../../build/artifact.ts'
import { buildImages, inspectImage, LAYOUT, NONROOT } from '../../build/image.ts'
import { umociPath } from '../../build/tools/umoci.ts'

/** Compressed image budget: the Node runtime dominates (~45 MB gzip, edge-facts §3.2). */
const MAX_COMPRESSED_BYTES = 60 * 1024 * 1024
const scratch: string[] = []
let tags: string[] = []

before(async () => {
  tags = await buildImages()
})
after(async () => {
  for (const d of scratch) await rm(d, { recursive: true, force: true })
})

test('both images are built: the Node runtime + bundle, and the single executable', () => {
  assert.deepEqual(tags, ['node', 'sea'])
})

test('config: non-root 65532, the edgeop entrypoint, `run` by default, within the size budget', async () => {
  const expected: Record<string, string[]> = {
    node: ['/nodejs/bin/node', '--optimize-for-size', '/app/edgeop.cjs'],
    sea: ['/app/edgeop'],
  }
  for (const tag of tags) {
    const { config, layerBytes } = await inspectImage(tag)
    assert.equal(config.User, `${NONROOT}:${NONROOT}`, tag)
    assert.deepEqual(config.Entrypoint, expected[tag], tag)
    assert.deepEqual(config.Cmd, ['run'], tag)
    assert.ok(layerBytes < MAX_COMPRESSED_BYTES, `${tag}: ${layerBytes} compressed bytes`)
    process.stderr.write(`image ${tag}: ${layerBytes} bytes compressed\n`)
  }
})

test('deploy/Dockerfile runs the node image the way build:image does', async () => {
  const dockerfile = await readFile(join(ROOT, 'deploy/Dockerfile'), 'utf8')
  const line = dockerfile.split('\n').find((l) => l.startsWith('ENTRYPOINT '))
  assert.deepEqual(
    JSON.parse(line!.slice('ENTRYPOINT '.length)),
    (await inspectImage('node')).config.Entrypoint,
  )
})

test('no shell, no package manager: only the runtime, its libraries, passwd/group and the app', async () => {
  const blobs = join(LAYOUT, 'blobs/sha256')
  const names: string[] = []
  for (const blob of await readdir(blobs)) {
    let listing = ''
    try {
      listing = execFileSync('tar', ['-tzf', join(blobs, blob)], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      })
    } catch {
      continue // manifests and configs are JSON, not layers
    }
    names.push(...listing.split('\n').filter(Boolean))
  }
  assert.ok(
    names.some((n) => n.endsWith('app/edgeop.cjs')),
    'the app is in a layer',
  )
  for (const forbidden of ['bin/sh', 'bin/bash', 'bin/dash', 'usr/bin/apt', 'bin/busybox']) {
    assert.ok(
      !names.some((n) => n.replace(/^\.\//, '') === forbidden || n.endsWith(`/${forbidden}`)),
      `${forbidden} must not be in the image`,
    )
  }
})

test('each entrypoint runs inside its own root filesystem as uid 65532', {
  skip: process.getuid?.() !== 0 ? 'needs root for chroot (CI runs as root)' : false,
}, async () => {
  for (const tag of tags) {
    const bundle = await mkdtemp(join(tmpdir(), `edgeop-bundle-${tag}-`))
    scratch.push(bundle)
    await rm(bundle, { recursive: true })
    execFileSync(umociPath(), ['unpack', '--image', `${LAYOUT}:${tag}`, bundle])
    const { config } = await inspectImage(tag)
    const out = execFileSync(
      'chroot',
      [`--userspec=${NONROOT}:${NONROOT}`, join(bundle, 'rootfs'), ...(config.Entrypoint ?? []), 'version'],
      {
        encoding: 'utf8',
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
      },
    )
    // Both run with the artifact's V8 flags: on the node command line, or embedded in the executable.
    assert.match(out, /^edgeop \d+\.\d+\.\d+ \(node v24\.[^)]*, --optimize-for-size\)$/m, tag)
  }
})
