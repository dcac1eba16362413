/**
 * @module build/oci-layout — reading one tagged image out of an OCI image layout.
 *
 * The layout (OCI image-spec v1.1 `image-layout.md`) is plain files: `index.json` lists
 * manifest descriptors, the tag is the descriptor's `org.opencontainers.image.ref.name`
 * annotation, and every blob lives at `blobs/<algorithm>/<hex>`. Reading an image is
 * index.json → manifest blob → config blob; each blob's size and sha256 are checked against
 * the descriptor that named it. This replaces `skopeo inspect`, so inspecting the images
 * `npm run build:image` writes needs nothing beyond Node.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

/** The annotation that carries a manifest's tag in `index.json` (image-spec annotations.md). */
export const REF_NAME_ANNOTATION = 'org.opencontainers.image.ref.name'

/** The image manifest media type (image-spec media-types.md); nested indexes are not followed. */
export const MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json'

/** A content descriptor (image-spec descriptor.md), the fields this reader uses. */
export interface Descriptor {
  mediaType: string
  digest: string
  size: number
  annotations?: Record<string, string>
}

/** The runtime part of an image config (image-spec config.md). */
export interface ImageRuntimeConfig {
  User?: string
  WorkingDir?: string
  Entrypoint?: string[]
  Cmd?: string[]
  Env?: string[]
  Labels?: Record<string, string>
}

/** One image read from a layout. */
export interface LayoutImage {
  manifest: { config: Descriptor; layers: Descriptor[] }
  /** The config blob's `config` object (empty if the image has none). */
  config: ImageRuntimeConfig
  /** Sum of the layers' descriptor sizes: the compressed bytes a registry would serve. */
  layerBytes: number
}

/** Only sha256 digests, so a blob path can never leave `blobs/sha256/`. */
const SHA256_DIGEST = /^sha256:([a-f0-9]{64})$/

/** Reads the blob a descriptor names and checks its size and digest. */
async function readBlob(layout: string, d: Descriptor): Promise<Buffer> {
  const hex = SHA256_DIGEST.exec(String(d.digest))?.[1]
  if (hex === undefined)
    throw new Error(`${layout}: unsupported digest ${JSON.stringify(d.digest).slice(0, 80)}`)
  const bytes = await readFile(join(layout, 'blobs/sha256', hex))
  if (bytes.length !== d.size)
    throw new Error(`${layout}: blob ${d.digest} has ${bytes.length} bytes, descriptor says ${d.size}`)
  if (createHash('sha256').update(bytes).digest('hex') !== hex) {
    throw new Error(`${layout}: blob ${d.digest} does not match its digest`)
  }
  return bytes
}

/**
 * The manifest, runtime config and compressed layer size of the image tagged `tag` in the
 * OCI layout at `layout`. Throws an error naming the layout when the tag is absent or
 * ambiguous, a descriptor is not an image manifest, or a blob is missing or corrupt.
 */
export async function readLayoutImage(layout: string, tag: string): Promise<LayoutImage> {
  const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as { manifests?: Descriptor[] }
  const matches = (index.manifests ?? []).filter((d) => d.annotations?.[REF_NAME_ANNOTATION] === tag)
  if (matches.length !== 1) {
    throw new Error(
      `${layout}: index.json has ${matches.length} manifests tagged ${JSON.stringify(tag)}, expected 1`,
    )
  }
  const descriptor = matches[0]!
  if (descriptor.mediaType !== MANIFEST_MEDIA_TYPE) {
    throw new Error(
      `${layout}: tag ${JSON.stringify(tag)} is a ${descriptor.mediaType}, not an image manifest`,
    )
  }
  const manifest = JSON.parse(
    (await readBlob(layout, descriptor)).toString('utf8'),
  ) as LayoutImage['manifest']
  const configBlob = JSON.parse((await readBlob(layout, manifest.config)).toString('utf8')) as {
    config?: ImageRuntimeConfig
  }
  const layerBytes = manifest.layers.reduce((n, l) => n + l.size, 0)
  return { manifest, config: configBlob.config ?? {}, layerBytes }
}
