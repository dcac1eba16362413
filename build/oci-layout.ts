/**
 * @module build/oci-layout — reading one tagged image out of an OCI image layout, and tagging a multi-platform index.
 *
 * The layout (OCI image-spec v1.1 `image-layout.md`) is plain files: `index.json` lists
 * descriptors, the tag is the descriptor's `org.opencontainers.image.ref.name` annotation,
 * and every blob lives at `blobs/<algorithm>/<hex>`. A tag names either an image manifest or
 * an image index (`image-index.md`) whose manifests carry a `platform`; reading an image is
 * index.json → [index blob → the platform's manifest] → manifest blob → config blob, and each
 * blob's size and sha256 are checked against the descriptor that named it. This replaces
 * `skopeo inspect`, so inspecting the images `npm run build:image` writes needs nothing
 * beyond Node. A tagged index is the shape `skopeo copy --all`, `crane`, `regctl` and
 * `ctr images import` push or import as one multi-architecture image.
 */
import { createHash } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/** The annotation that carries a manifest's tag in `index.json` (image-spec annotations.md). */
export const REF_NAME_ANNOTATION = 'org.opencontainers.image.ref.name'

/** The image manifest media type (image-spec media-types.md). */
export const MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json'

/** The image index media type (image-spec media-types.md): one manifest per platform. */
export const INDEX_MEDIA_TYPE = 'application/vnd.oci.image.index.v1+json'

/** The platform a manifest of an index runs on (image-spec image-index.md). */
export interface DescriptorPlatform {
  architecture: string
  os: string
  variant?: string
}

/** A content descriptor (image-spec descriptor.md), the fields this reader uses. */
export interface Descriptor {
  mediaType: string
  digest: string
  size: number
  annotations?: Record<string, string>
  platform?: DescriptorPlatform
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
  /** The config blob's `architecture` and `os`. */
  platform: { architecture?: string; os?: string }
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

interface IndexJson {
  schemaVersion: 2
  mediaType?: string
  manifests?: Descriptor[]
}

const readIndexJson = async (layout: string): Promise<IndexJson> =>
  JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as IndexJson

/** The one descriptor tagged `tag` in index.json. */
async function taggedDescriptor(layout: string, tag: string): Promise<Descriptor> {
  const index = await readIndexJson(layout)
  const matches = (index.manifests ?? []).filter((d) => d.annotations?.[REF_NAME_ANNOTATION] === tag)
  if (matches.length !== 1) {
    throw new Error(
      `${layout}: index.json has ${matches.length} manifests tagged ${JSON.stringify(tag)}, expected 1`,
    )
  }
  return matches[0]!
}

/** The manifests of the image index tagged `tag`, each with its platform. */
async function indexManifests(layout: string, tag: string, index: Descriptor): Promise<Descriptor[]> {
  const body = JSON.parse((await readBlob(layout, index)).toString('utf8')) as IndexJson
  const manifests = body.manifests ?? []
  if (manifests.some((m) => m.mediaType !== MANIFEST_MEDIA_TYPE || m.platform === undefined)) {
    throw new Error(
      `${layout}: index ${JSON.stringify(tag)} lists an entry that is not a manifest with a platform`,
    )
  }
  return manifests
}

/**
 * The platforms of the image index tagged `tag`, in index order; a tag that names a single
 * image manifest has none. Throws like {@link readLayoutImage}.
 */
export async function readLayoutPlatforms(layout: string, tag: string): Promise<DescriptorPlatform[]> {
  const descriptor = await taggedDescriptor(layout, tag)
  if (descriptor.mediaType !== INDEX_MEDIA_TYPE) return []
  return (await indexManifests(layout, tag, descriptor)).map((m) => m.platform!)
}

/**
 * The manifest, runtime config and compressed layer size of the image tagged `tag` in the
 * OCI layout at `layout`; when the tag names an image index, of its manifest for
 * `architecture` (required then). Throws an error naming the layout when the tag is absent or
 * ambiguous, the index has no (or several) manifests for the architecture, a descriptor is
 * neither a manifest nor an index, or a blob is missing or corrupt.
 */
export async function readLayoutImage(
  layout: string,
  tag: string,
  architecture?: string,
): Promise<LayoutImage> {
  let descriptor = await taggedDescriptor(layout, tag)
  if (descriptor.mediaType === INDEX_MEDIA_TYPE) {
    const matches = (await indexManifests(layout, tag, descriptor)).filter(
      (m) => m.platform?.architecture === architecture,
    )
    if (matches.length !== 1) {
      throw new Error(
        `${layout}: index ${JSON.stringify(tag)} has ${matches.length} manifests for architecture ${JSON.stringify(architecture ?? null)}, expected 1`,
      )
    }
    descriptor = matches[0]!
  }
  if (descriptor.mediaType !== MANIFEST_MEDIA_TYPE) {
    throw new Error(
      `${layout}: tag ${JSON.stringify(tag)} is a ${descriptor.mediaType}, not an image manifest or index`,
    )
  }
  const manifest = JSON.parse(
    (await readBlob(layout, descriptor)).toString('utf8'),
  ) as LayoutImage['manifest']
  const configBlob = JSON.parse((await readBlob(layout, manifest.config)).toString('utf8')) as {
    config?: ImageRuntimeConfig
    architecture?: string
    os?: string
  }
  const layerBytes = manifest.layers.reduce((n, l) => n + l.size, 0)
  return {
    manifest,
    config: configBlob.config ?? {},
    platform: { architecture: configBlob.architecture, os: configBlob.os },
    layerBytes,
  }
}

/**
 * Tags an image index in the layout: writes an index blob listing the manifests tagged
 * `sources[i].tag` with `sources[i].platform`, and points `tag` in index.json at it (replacing
 * an earlier `tag`). The per-platform tags stay, so each architecture can also be used alone.
 */
export async function tagImageIndex(
  layout: string,
  tag: string,
  sources: readonly { tag: string; platform: DescriptorPlatform }[],
): Promise<Descriptor> {
  const manifests: Descriptor[] = []
  for (const s of sources) {
    const d = await taggedDescriptor(layout, s.tag)
    if (d.mediaType !== MANIFEST_MEDIA_TYPE) throw new Error(`${layout}: ${s.tag} is not an image manifest`)
    manifests.push({ mediaType: d.mediaType, digest: d.digest, size: d.size, platform: s.platform })
  }
  const body = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: INDEX_MEDIA_TYPE, manifests }))
  const hex = createHash('sha256').update(body).digest('hex')
  await writeFile(join(layout, 'blobs/sha256', hex), body)
  const descriptor: Descriptor = {
    mediaType: INDEX_MEDIA_TYPE,
    digest: `sha256:${hex}`,
    size: body.length,
    annotations: { [REF_NAME_ANNOTATION]: tag },
  }
  const index = await readIndexJson(layout)
  index.manifests = [
    ...(index.manifests ?? []).filter((d) => d.annotations?.[REF_NAME_ANNOTATION] !== tag),
    descriptor,
  ]
  await writeFile(join(layout, 'index.json'), JSON.stringify(index))
  return descriptor
}
