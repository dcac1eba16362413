/**
 * build/oci-layout.ts on hand-made layouts: it finds the tagged manifest, returns the
 * config and the layers' compressed size, and refuses a missing tag, a corrupt blob and a
 * digest that would name a path outside the layout.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import {
  INDEX_MEDIA_TYPE,
  MANIFEST_MEDIA_TYPE,
  REF_NAME_ANNOTATION,
  readLayoutImage,
  readLayoutPlatforms,
  tagImageIndex,
} from '../../build/oci-layout.ts'

const scratch: string[] = []
after(async () => {
  for (const d of scratch) await rm(d, { recursive: true, force: true })
})

interface Blob {
  digest: string
  size: number
}

async function putBlob(layout: string, bytes: string): Promise<Blob> {
  const hex = createHash('sha256').update(bytes).digest('hex')
  await writeFile(join(layout, 'blobs/sha256', hex), bytes)
  return { digest: `sha256:${hex}`, size: Buffer.byteLength(bytes) }
}

/** A layout with one image tagged `tag`: two layers of 100 and 23 (claimed) bytes. */
async function makeLayout(
  tag: string,
  architecture = 'amd64',
  into?: string,
): Promise<{ layout: string; manifest: Blob }> {
  const layout = into ?? (await mkdtemp(join(tmpdir(), 'edgeop-oci-layout-')))
  if (into === undefined) scratch.push(layout)
  await mkdir(join(layout, 'blobs/sha256'), { recursive: true })
  await writeFile(join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}')
  const config = await putBlob(
    layout,
    JSON.stringify({
      architecture,
      os: 'linux',
      config: { User: '65532:65532', Cmd: ['run'], Env: [architecture] },
    }),
  )
  const layer = (n: number): Blob => ({ digest: `sha256:${String(n).repeat(64).slice(0, 64)}`, size: n })
  const manifest = await putBlob(
    layout,
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MANIFEST_MEDIA_TYPE,
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
      layers: [layer(100), layer(23)],
    }),
  )
  const earlier =
    into === undefined ? [] : JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')).manifests
  await writeIndex(layout, [
    ...earlier,
    { mediaType: MANIFEST_MEDIA_TYPE, ...manifest, annotations: { [REF_NAME_ANNOTATION]: tag } },
  ])
  return { layout, manifest }
}

const writeIndex = (layout: string, manifests: object[]): Promise<void> =>
  writeFile(join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests }))

test('the tagged image: its runtime config and the sum of its layer sizes', async () => {
  const { layout } = await makeLayout('node')
  const image = await readLayoutImage(layout, 'node')
  assert.deepEqual(image.config, { User: '65532:65532', Cmd: ['run'], Env: ['amd64'] })
  assert.deepEqual(image.platform, { architecture: 'amd64', os: 'linux' })
  assert.equal(image.layerBytes, 123)
  assert.equal(image.manifest.layers.length, 2)
})

test('a tag that is not in index.json is an error naming the tag', async () => {
  const { layout } = await makeLayout('node')
  await assert.rejects(readLayoutImage(layout, 'sea'), /0 manifests tagged "sea"/)
})

test('a blob whose bytes do not match its digest is refused', async () => {
  const { layout, manifest } = await makeLayout('node')
  await writeFile(
    join(layout, 'blobs/sha256', manifest.digest.slice('sha256:'.length)),
    'x'.repeat(manifest.size),
  )
  await assert.rejects(readLayoutImage(layout, 'node'), /does not match its digest/)
})

test('a digest that is not sha256 hex (e.g. a path) is refused before any file is read', async () => {
  const { layout } = await makeLayout('node')
  await writeIndex(layout, [
    {
      mediaType: MANIFEST_MEDIA_TYPE,
      digest: 'sha256:../../../../etc/passwd',
      size: 1,
      annotations: { [REF_NAME_ANNOTATION]: 'node' },
    },
  ])
  await assert.rejects(readLayoutImage(layout, 'node'), /unsupported digest/)
})

/** A layout with `app-linux-amd64` and `app-linux-arm64`, and `app` tagged as their index. */
async function makeIndexLayout(): Promise<string> {
  const { layout } = await makeLayout('app-linux-amd64', 'amd64')
  await makeLayout('app-linux-arm64', 'arm64', layout)
  await tagImageIndex(layout, 'app', [
    { tag: 'app-linux-amd64', platform: { architecture: 'amd64', os: 'linux' } },
    { tag: 'app-linux-arm64', platform: { architecture: 'arm64', os: 'linux', variant: 'v8' } },
  ])
  return layout
}

test('a tagged index: its platforms, and the image of each architecture through it', async () => {
  const layout = await makeIndexLayout()
  assert.deepEqual(await readLayoutPlatforms(layout, 'app'), [
    { architecture: 'amd64', os: 'linux' },
    { architecture: 'arm64', os: 'linux', variant: 'v8' },
  ])
  for (const arch of ['amd64', 'arm64']) {
    const image = await readLayoutImage(layout, 'app', arch)
    assert.deepEqual(image.config.Env, [arch], arch)
    assert.equal(image.platform.architecture, arch)
  }
  // The per-architecture tags stay usable alone, and a single manifest has no platforms.
  assert.equal((await readLayoutImage(layout, 'app-linux-arm64')).platform.architecture, 'arm64')
  assert.deepEqual(await readLayoutPlatforms(layout, 'app-linux-arm64'), [])
})

test('tagImageIndex writes one index descriptor for the tag, replacing an earlier one', async () => {
  const layout = await makeIndexLayout()
  await tagImageIndex(layout, 'app', [
    { tag: 'app-linux-arm64', platform: { architecture: 'arm64', os: 'linux' } },
  ])
  const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8'))
  const tagged = index.manifests.filter(
    (d: { annotations?: Record<string, string> }) => d.annotations?.[REF_NAME_ANNOTATION] === 'app',
  )
  assert.equal(tagged.length, 1)
  assert.equal(tagged[0].mediaType, INDEX_MEDIA_TYPE)
  assert.deepEqual(await readLayoutPlatforms(layout, 'app'), [{ architecture: 'arm64', os: 'linux' }])
})

test('an index read without an architecture it has is an error naming the architecture', async () => {
  const layout = await makeIndexLayout()
  await assert.rejects(readLayoutImage(layout, 'app', 's390x'), /0 manifests for architecture "s390x"/)
  await assert.rejects(readLayoutImage(layout, 'app'), /0 manifests for architecture null/)
})
