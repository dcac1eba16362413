/**
 * build/oci-layout.ts on hand-made layouts: it finds the tagged manifest, returns the
 * config and the layers' compressed size, and refuses a missing tag, a corrupt blob and a
 * digest that would name a path outside the layout.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { MANIFEST_MEDIA_TYPE, REF_NAME_ANNOTATION, readLayoutImage } from '../../build/oci-layout.ts'

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
async function makeLayout(tag: string): Promise<{ layout: string; manifest: Blob }> {
  const layout = await mkdtemp(join(tmpdir(), 'edgeop-oci-layout-'))
  scratch.push(layout)
  await mkdir(join(layout, 'blobs/sha256'), { recursive: true })
  await writeFile(join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}')
  const config = await putBlob(
    layout,
    JSON.stringify({ architecture: 'amd64', os: 'linux', config: { User: '65532:65532', Cmd: ['run'] } }),
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
  await writeIndex(layout, [
    { mediaType: MANIFEST_MEDIA_TYPE, ...manifest, annotations: { [REF_NAME_ANNOTATION]: tag } },
  ])
  return { layout, manifest }
}

const writeIndex = (layout: string, manifests: object[]): Promise<void> =>
  writeFile(join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests }))

test('the tagged image: its runtime config and the sum of its layer sizes', async () => {
  const { layout } = await makeLayout('node')
  const image = await readLayoutImage(layout, 'node')
  assert.deepEqual(image.config, { User: '65532:65532', Cmd: ['run'] })
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
