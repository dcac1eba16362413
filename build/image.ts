/**
 * @module build/image — `npm run build:image`: OCI images without a Docker engine.
 *
 * Two single-layer images in the OCI layout dist/image/ (tags `node` and `sea`), each a
 * distroless-style root filesystem: the dynamic-library closure of the Node 24 binary
 * (`ldd`), /etc/passwd and /etc/group with the nonroot user 65532, a sticky /tmp, and
 * - `node`: a stripped Node 24 at /nodejs/bin/node plus /app/edgeop.cjs;
 * - `sea`:  the single executable at /app/edgeop.
 * No shell, no package manager. Written with umoci, built from the Go module proxy on first
 * use (build/tools/umoci.ts), and read back with build/oci-layout.ts: no system package
 * (edge-facts §3.2). deploy/Dockerfile and deploy/Dockerfile.sea are the same images for
 * machines with Docker and registry access (distroless Node 24 and cc bases).
 */
import { execFileSync } from 'node:child_process'
import { chmod, copyFile, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { ROOT } from './artifact.ts'
import { NODE_FLAGS } from './node-flags.ts'
import { type ImageRuntimeConfig, readLayoutImage } from './oci-layout.ts'
import { umociPath } from './tools/umoci.ts'

export const LAYOUT = join(ROOT, 'dist/image')
/** distroless's nonroot uid/gid. */
export const NONROOT = 65532

const run = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' })

/** Shared libraries a binary loads, as ldd reports them (path as named, not resolved). */
function libraryClosure(binary: string): string[] {
  const out = run('ldd', [binary])
  return [...out.matchAll(/(?:=>\s*)?(\/[^\s]+)\s+\(0x/g)].map((m) => m[1]!)
}

async function stageBase(stage: string, binary: string): Promise<void> {
  // mkdtemp made it 0700: as the image's `/`, that would lock out the nonroot user.
  await chmod(stage, 0o755)
  for (const lib of libraryClosure(binary)) {
    await mkdir(join(stage, dirname(lib)), { recursive: true })
    await copyFile(await realpath(lib), join(stage, lib))
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

/** Builds one variant into the layout; returns its tag. */
async function buildVariant(umoci: string, tag: 'node' | 'sea'): Promise<string> {
  const stage = await mkdtemp(join(tmpdir(), `edgeop-image-${tag}-`))
  try {
    if (tag === 'node') {
      await stageBase(stage, process.execPath)
      await mkdir(join(stage, 'nodejs/bin'), { recursive: true })
      await copyFile(process.execPath, join(stage, 'nodejs/bin/node'))
      run('strip', [join(stage, 'nodejs/bin/node')])
      await copyFile(join(ROOT, 'dist/edgeop.cjs'), join(stage, 'app/edgeop.cjs'))
    } else {
      const sea = join(ROOT, 'dist/edgeop')
      await stageBase(stage, sea)
      await copyFile(sea, join(stage, 'app/edgeop'))
      await chmod(join(stage, 'app/edgeop'), 0o755)
    }
    await copyFile(join(ROOT, 'dist/THIRD-PARTY-NOTICES'), join(stage, 'app/THIRD-PARTY-NOTICES'))
    const ref = `${LAYOUT}:${tag}`
    run(umoci, ['new', '--image', ref])
    run(umoci, ['insert', '--image', ref, stage, '/'])
    const entrypoint =
      tag === 'node' ? ['/nodejs/bin/node', ...NODE_FLAGS, '/app/edgeop.cjs'] : ['/app/edgeop']
    run(umoci, [
      'config',
      '--image',
      ref,
      `--config.user=${NONROOT}:${NONROOT}`,
      '--config.workingdir=/app',
      ...entrypoint.map((e) => `--config.entrypoint=${e}`),
      '--config.cmd=run',
      '--config.env=NODE_ENV=production',
      `--config.label=org.opencontainers.image.version=${JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')).version}`,
      '--config.label=org.opencontainers.image.title=edgeop',
    ])
    return tag
  } finally {
    await rm(stage, { recursive: true, force: true })
  }
}

/** Builds both images (the SEA variant only if dist/edgeop exists). */
export async function buildImages(): Promise<string[]> {
  const umoci = umociPath()
  await rm(LAYOUT, { recursive: true, force: true })
  run(umoci, ['init', '--layout', LAYOUT])
  const tags = [await buildVariant(umoci, 'node')]
  const hasSea = await readFile(join(ROOT, 'dist/edgeop')).then(
    () => true,
    () => false,
  )
  if (hasSea) tags.push(await buildVariant(umoci, 'sea'))
  run(umoci, ['gc', '--layout', LAYOUT])
  return tags
}

/** The runtime config and compressed layer bytes of one tag in {@link LAYOUT}. */
export async function inspectImage(tag: string): Promise<{ config: ImageRuntimeConfig; layerBytes: number }> {
  const { config, layerBytes } = await readLayoutImage(LAYOUT, tag)
  return { config, layerBytes }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const tag of await buildImages()) {
    const { config, layerBytes } = await inspectImage(tag)
    process.stdout.write(
      `dist/image:${tag}: ${layerBytes} bytes compressed, user ${config.User}, entrypoint ${JSON.stringify(config.Entrypoint)}\n`,
    )
  }
}
