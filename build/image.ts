/**
 * @module build/image — `npm run build:image`: multi-architecture OCI images without a Docker engine.
 *
 * The OCI layout dist/image/ holds two image indexes, tags `node` and `sea`, each with a
 * linux/amd64 and a linux/arm64 manifest (also tagged alone: `node-linux-arm64`, …). Every
 * image is one layer, a distroless-style root filesystem: the dynamic-library closure of its
 * Node 24 binary, /etc/passwd and /etc/group with the nonroot user 65532, a sticky /tmp, and
 * - `node`: a stripped Node 24 at /nodejs/bin/node plus /app/edgeop.cjs and its compile cache in
 *   /app/compile-cache, made at build time by that Node under the shipped flags and read through
 *   `NODE_COMPILE_CACHE` (build/compile-cache.ts);
 * - `sea`:  the single executable of that architecture at /app/edgeop (build/sea.ts).
 * The host architecture's closure is `ldd`'s, copied from the host; the other one's is its own
 * dynamic loader's `--list` run under qemu, copied from Debian's packages of that architecture
 * (build/targets.ts). No shell, no package manager. Written with umoci, built from the Go module
 * proxy on first use (build/tools/umoci.ts); the indexes are written and read back with
 * build/oci-layout.ts: no system package (edge-facts §3.2). deploy/Dockerfile and
 * deploy/Dockerfile.sea are the same images for machines with Docker and registry access
 * (distroless Node 24 and cc bases).
 */
import { execFileSync } from 'node:child_process'
import { access, chmod, copyFile, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, sep } from 'node:path'
import { ROOT, UNPACKED_ARTIFACT } from './artifact.ts'
import { compileCacheEnv, writeCompileCache } from './compile-cache.ts'
import { NODE_FLAGS } from './node-flags.ts'
import { type ImageRuntimeConfig, readLayoutImage, tagImageIndex } from './oci-layout.ts'
import { seaPath } from './sea.ts'
import {
  ARCHES,
  type Arch,
  commandFor,
  HOST_ARCH,
  loaderOf,
  nodeBinary,
  platformOf,
  stripBinary,
  sysroot,
} from './targets.ts'
import { umociPath } from './tools/umoci.ts'

export const LAYOUT = join(ROOT, 'dist/image')
/** distroless's nonroot uid/gid. */
export const NONROOT = 65532
/** Where the app lives in both images. */
export const APP_DIR = '/app'
/** The `node` image's environment besides `NODE_ENV`: Node reads the shipped compile cache. */
export const NODE_IMAGE_ENV: Readonly<Record<string, string>> = compileCacheEnv(APP_DIR)

const run = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' })

/** The image variants: the Node runtime + bundle, and the single executable. */
export type Variant = 'node' | 'sea'

/** The tag of one architecture's image of a variant, beside the index tag `variant`. */
export const archTag = (variant: Variant, arch: Arch): string => `${variant}-linux-${arch}`

/**
 * The shared libraries a binary loads, as paths inside the image (not resolved), from the
 * dynamic loader's listing: `ldd` on the host; for another architecture, that architecture's
 * loader `--list` under qemu with `root` as its prefix. A line is `name => /path (0x…)`, or
 * `/path (0x…)` for the loader itself (whose line under qemu reads `/path => <prefix>/path`).
 */
export function libraryClosure(arch: Arch, binary: string, root: string): string[] {
  const argv =
    arch === HOST_ARCH
      ? ['ldd', binary]
      : commandFor(arch, [join(root, loaderOf(arch)), '--list', binary], root)
  const out = run(argv[0]!, argv.slice(1))
  const paths: string[] = []
  for (const line of out.split('\n')) {
    const m = /^\s*(\S+)(?:\s+=>\s+(\S+))?\s+\(0x/.exec(line)
    if (m === null) continue
    const path = m[1]!.startsWith('/') ? m[1]! : m[2]
    if (path?.startsWith('/')) paths.push(path)
  }
  return paths
}

/** `path` (absolute, in the image) resolved through symlinks inside `root`; refuses an escape. */
async function resolveInside(root: string, path: string): Promise<string> {
  const real = await realpath(join(root, path))
  const base = await realpath(root)
  if (!real.startsWith(base + sep)) throw new Error(`${path} resolves outside ${root} (to ${real})`)
  return real
}

async function stageBase(stage: string, binary: string, arch: Arch): Promise<void> {
  // mkdtemp made it 0700: as the image's `/`, that would lock out the nonroot user.
  await chmod(stage, 0o755)
  const root = arch === HOST_ARCH ? '/' : sysroot(arch)
  for (const lib of libraryClosure(arch, binary, root)) {
    await mkdir(join(stage, dirname(lib)), { recursive: true })
    await copyFile(
      arch === HOST_ARCH ? await realpath(lib) : await resolveInside(root, lib),
      join(stage, lib),
    )
  }
  await mkdir(join(stage, 'etc'), { recursive: true })
  await writeFile(
    join(stage, 'etc/passwd'),
    `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${NONROOT}:${NONROOT}:nonroot:/home/nonroot:/sbin/nologin\n`,
  )
  await writeFile(join(stage, 'etc/group'), `root:x:0:\nnonroot:x:${NONROOT}:\n`)
  await mkdir(join(stage, 'tmp'), { recursive: true })
  await chmod(join(stage, 'tmp'), 0o1777)
  await mkdir(join(stage, 'home/nonroot'), { recursive: true })
  await mkdir(join(stage, 'app'), { recursive: true })
}

/** Builds one variant for one architecture into the layout; returns its tag. */
async function buildVariant(umoci: string, variant: Variant, arch: Arch): Promise<string> {
  const tag = archTag(variant, arch)
  const stage = await mkdtemp(join(tmpdir(), `edgeop-image-${tag}-`))
  try {
    if (variant === 'node') {
      const node = await nodeBinary(arch)
      await stageBase(stage, node, arch)
      await mkdir(join(stage, 'nodejs/bin'), { recursive: true })
      await copyFile(node, join(stage, 'nodejs/bin/node'))
      if (!stripBinary(arch, join(stage, 'nodejs/bin/node'))) throw new Error(`${tag}: strip failed`)
      // Unpacked, so the compile cache covers edgeop's code (build/artifact.ts UNPACKED_ARTIFACT).
      await copyFile(UNPACKED_ARTIFACT, join(stage, 'app/edgeop.cjs'))
      await writeCompileCache(arch, join(stage, 'nodejs/bin/node'), join(stage, 'app'), NONROOT)
    } else {
      const sea = seaPath(arch)
      await stageBase(stage, sea, arch)
      await copyFile(sea, join(stage, 'app/edgeop'))
      await chmod(join(stage, 'app/edgeop'), 0o755)
    }
    await copyFile(join(ROOT, 'dist/THIRD-PARTY-NOTICES'), join(stage, 'app/THIRD-PARTY-NOTICES'))
    const ref = `${LAYOUT}:${tag}`
    const { architecture, os, variant: cpuVariant } = platformOf(arch)
    run(umoci, ['new', '--image', ref])
    run(umoci, ['insert', '--image', ref, stage, '/'])
    const entrypoint =
      variant === 'node' ? ['/nodejs/bin/node', ...NODE_FLAGS, '/app/edgeop.cjs'] : ['/app/edgeop']
    run(umoci, [
      'config',
      '--image',
      ref,
      `--platform.os=${os}`,
      `--platform.arch=${architecture}`,
      ...(cpuVariant ? [`--platform.variant=${cpuVariant}`] : []),
      `--config.user=${NONROOT}:${NONROOT}`,
      '--config.workingdir=/app',
      ...entrypoint.map((e) => `--config.entrypoint=${e}`),
      '--config.cmd=run',
      '--config.env=NODE_ENV=production',
      ...(variant === 'node' ? Object.entries(NODE_IMAGE_ENV).map(([k, v]) => `--config.env=${k}=${v}`) : []),
      `--config.label=org.opencontainers.image.version=${JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')).version}`,
      '--config.label=org.opencontainers.image.title=edgeop',
    ])
    return tag
  } finally {
    await rm(stage, { recursive: true, force: true })
  }
}

/**
 * Builds both variants for every architecture and tags each variant's index; returns the
 * index tags. The `sea` variant of an architecture is built only if its single executable
 * exists (build/sea.ts), and `sea` is tagged only if one does.
 */
export async function buildImages(): Promise<Variant[]> {
  const umoci = umociPath()
  await rm(LAYOUT, { recursive: true, force: true })
  run(umoci, ['init', '--layout', LAYOUT])
  const tags: Variant[] = []
  for (const variant of ['node', 'sea'] as const) {
    const arches: Arch[] = []
    for (const arch of ARCHES) {
      if (
        variant === 'sea' &&
        !(await access(seaPath(arch)).then(
          () => true,
          () => false,
        ))
      )
        continue
      await buildVariant(umoci, variant, arch)
      arches.push(arch)
    }
    if (arches.length === 0) continue
    await tagImageIndex(
      LAYOUT,
      variant,
      arches.map((arch) => ({ tag: archTag(variant, arch), platform: platformOf(arch) })),
    )
    tags.push(variant)
  }
  run(umoci, ['gc', '--layout', LAYOUT])
  return tags
}

/** The runtime config, platform and compressed layer bytes of `variant`'s image for `arch` in {@link LAYOUT}. */
export async function inspectImage(
  variant: Variant,
  arch: Arch = HOST_ARCH,
): Promise<{ config: ImageRuntimeConfig; layerBytes: number; architecture: string | undefined }> {
  const { config, layerBytes, platform } = await readLayoutImage(LAYOUT, variant, arch)
  return { config, layerBytes, architecture: platform.architecture }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const variant of await buildImages()) {
    for (const arch of ARCHES) {
      const image = await inspectImage(variant, arch).catch(() => undefined)
      if (image === undefined) continue
      process.stdout.write(
        `dist/image:${variant} linux/${arch}: ${image.layerBytes} bytes compressed, user ${image.config.User}, entrypoint ${JSON.stringify(image.config.Entrypoint)}\n`,
      )
    }
  }
  // One file for `ctr images import` / `skopeo copy oci-archive:` (the layout, tarred as is).
  run('tar', ['-C', LAYOUT, '-cf', join(ROOT, 'dist/edgeop-oci.tar'), '.'])
  process.stdout.write('dist/edgeop-oci.tar: the layout as an OCI archive\n')
}
