/**
 * The operator's image without a Docker engine: an OCI image layout in dist/image, tag = the
 * package's version, for `skopeo copy oci:dist/image:<tag> docker://…`, `ctr images import` (of the
 * layout tarred) or `umoci unpack`. One layer, the same root filesystem as edgeop's own `node` image
 * and the Dockerfile's distroless base: the Node that runs this script (stripped when `strip` is
 * installed) at /nodejs/bin/node with the shared libraries `ldd` lists for it, /etc/passwd and
 * /etc/group with the nonroot user 65532, a sticky /tmp, and dist/operator.mjs at /app. No shell, no
 * package manager; the image runs as 65532 and needs no writable root. Run `npm run build` first.
 */

import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

/** distroless's nonroot uid and gid; the generated Deployment's runAsUser. */
const NONROOT = 65532
const LAYOUT = 'dist/image'
const ENTRYPOINT = ['/nodejs/bin/node', '/app/operator.mjs']

type Entry = { path: string; mode: number; uid?: number; data?: Buffer }

/** The shared libraries `binary` loads, as absolute paths (`ldd`: `name => /path (0x…)` or `/path (0x…)`). */
function libraries(binary: string): string[] {
  const out = execFileSync('ldd', [binary], { encoding: 'utf8' })
  const paths: string[] = []
  for (const line of out.split('\n')) {
    const m = /^\s*(\S+)(?:\s+=>\s+(\S+))?\s+\(0x/.exec(line)
    const path = m?.[1]?.startsWith('/') ? m[1] : m?.[2]
    if (path?.startsWith('/')) paths.push(path)
  }
  return paths
}

/** The Node binary, stripped of its symbols when binutils' `strip` is there (about a third smaller). */
async function nodeBinary(): Promise<Buffer> {
  const copy = join(LAYOUT, '.node')
  await writeFile(copy, await readFile(process.execPath))
  try {
    execFileSync('strip', ['--strip-all', copy], { stdio: 'ignore' })
  } catch {
    // No binutils: the image is larger, nothing else changes.
  }
  const bytes = await readFile(copy)
  await rm(copy)
  return bytes
}

/** One ustar header block for `e` (size 0 for a directory). */
function header(e: Entry): Buffer {
  const h = Buffer.alloc(512)
  const octal = (n: number, width: number) => `${n.toString(8).padStart(width - 1, '0')}\0`
  h.write(e.path.replace(/^\//, ''), 0, 100)
  h.write(octal(e.mode, 8), 100)
  h.write(octal(e.uid ?? 0, 8), 108)
  h.write(octal(e.uid ?? 0, 8), 116)
  h.write(octal(e.data?.length ?? 0, 12), 124)
  h.write(octal(0, 12), 136) // mtime 0: the same inputs give the same digest
  h.write(' '.repeat(8), 148)
  h.write(e.data ? '0' : '5', 156)
  h.write('ustar\0' + '00', 257)
  let sum = 0
  for (const b of h) sum += b
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148)
  return h
}

/** The entries as one tar: every parent directory before its files. */
function tar(entries: Entry[]): Buffer {
  const dirs = new Set<string>()
  for (const e of entries)
    for (let p = e.path.slice(0, e.path.lastIndexOf('/')); p !== ''; p = p.slice(0, p.lastIndexOf('/')))
      dirs.add(p)
  const given = new Set(entries.map((e) => e.path))
  const all: Entry[] = [
    ...[...dirs]
      .filter((d) => !given.has(`${d}/`) && !given.has(d))
      .sort()
      .map((d) => ({ path: `${d}/`, mode: 0o755 })),
    ...entries,
  ]
  const blocks: Buffer[] = []
  for (const e of all) {
    blocks.push(header(e))
    if (e.data) blocks.push(e.data, Buffer.alloc((512 - (e.data.length % 512)) % 512))
  }
  blocks.push(Buffer.alloc(1024))
  return Buffer.concat(blocks)
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex')

/** Writes `bytes` as a blob of the layout; returns its descriptor. */
async function blob(mediaType: string, bytes: Buffer) {
  const hex = sha256(bytes)
  await writeFile(join(LAYOUT, 'blobs/sha256', hex), bytes)
  return { mediaType, digest: `sha256:${hex}`, size: bytes.length }
}

const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { name: string; version: string }
await rm(LAYOUT, { recursive: true, force: true })
await mkdir(join(LAYOUT, 'blobs/sha256'), { recursive: true })
const entries: Entry[] = []
for (const lib of libraries(process.execPath))
  entries.push({ path: lib, mode: 0o755, data: await readFile(await realpath(lib)) })
entries.push(
  { path: '/nodejs/bin/node', mode: 0o755, data: await nodeBinary() },
  {
    path: '/etc/passwd',
    mode: 0o644,
    data: Buffer.from(
      `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${NONROOT}:${NONROOT}:nonroot:/home/nonroot:/sbin/nologin\n`,
    ),
  },
  { path: '/etc/group', mode: 0o644, data: Buffer.from(`root:x:0:\nnonroot:x:${NONROOT}:\n`) },
  { path: '/tmp/', mode: 0o1777 },
  { path: '/home/nonroot/', mode: 0o700, uid: NONROOT },
  { path: '/app/operator.mjs', mode: 0o644, data: await readFile('dist/operator.mjs') },
)
const layerTar = tar(entries)
const layer = await blob('application/vnd.oci.image.layer.v1.tar+gzip', gzipSync(layerTar))
const architecture = { x64: 'amd64', arm64: 'arm64' }[process.arch as string] ?? process.arch
const config = await blob(
  'application/vnd.oci.image.config.v1+json',
  Buffer.from(
    JSON.stringify({
      architecture,
      os: 'linux',
      config: {
        User: `${NONROOT}:${NONROOT}`,
        Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'NODE_ENV=production'],
        Entrypoint: ENTRYPOINT,
        Cmd: ['run'],
        WorkingDir: '/app',
        Labels: {
          'org.opencontainers.image.title': pkg.name,
          'org.opencontainers.image.version': pkg.version,
        },
      },
      rootfs: { type: 'layers', diff_ids: [`sha256:${sha256(layerTar)}`] },
    }),
  ),
)
const manifest = await blob(
  'application/vnd.oci.image.manifest.v1+json',
  Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config,
      layers: [layer],
    }),
  ),
)
await writeFile(join(LAYOUT, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }))
await writeFile(
  join(LAYOUT, 'index.json'),
  JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [
      {
        ...manifest,
        platform: { architecture, os: 'linux' },
        annotations: { 'org.opencontainers.image.ref.name': pkg.version },
      },
    ],
  }),
)
console.log(`${LAYOUT}:${pkg.version} linux/${architecture}: ${layer.size} bytes compressed, user ${NONROOT}`)
