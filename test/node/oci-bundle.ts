/**
 * @module node/oci-bundle — an OCI runtime bundle from an image of the OCI layout, the way a
 * container runtime prepares one: `umoci unpack` writes the root filesystem and a config.json
 * from the image's config (user, entrypoint, environment, working directory), and
 * {@link configureBundle} applies what a pod spec adds (arguments, read-only root, no
 * capabilities, mounts, the memory limit and the cgroup, the network namespace).
 */
import { execFileSync } from 'node:child_process'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/** The parts of the OCI runtime spec (runtime-spec config.json) this module reads or writes. */
export interface RuntimeSpec {
  process: {
    user: { uid: number; gid: number; additionalGids?: number[] }
    args: string[]
    env?: string[]
    cwd: string
    noNewPrivileges?: boolean
    capabilities?: Record<'bounding' | 'effective' | 'inheritable' | 'permitted' | 'ambient', string[]>
    [k: string]: unknown
  }
  root: { path: string; readonly?: boolean }
  mounts?: { destination: string; type?: string; source?: string; options?: string[] }[]
  linux?: {
    namespaces?: { type: string; path?: string }[]
    resources?: { memory?: { limit?: number }; [k: string]: unknown }
    cgroupsPath?: string
    [k: string]: unknown
  }
  [k: string]: unknown
}

/** A read-only bind mount of a host path into the container. */
export interface BindMount {
  source: string
  destination: string
}

/** What a pod spec adds to the image's own config. */
export interface BundleOptions {
  /** The image config's `Entrypoint` (umoci's config.json has it joined with `Cmd`). */
  entrypoint: readonly string[]
  /** What follows the entrypoint (a pod's `args`, which replace the image's `Cmd`). */
  args: readonly string[]
  /** Added to the image's environment (a pod's `env`). */
  env?: Readonly<Record<string, string>>
  /** `readOnlyRootFilesystem`. */
  readOnlyRoot: boolean
  /** `resources.limits.memory`, in bytes. */
  memoryLimitBytes: number
  /** The container's cgroup, relative to each hierarchy's root (cgroupfs driver). */
  cgroupsPath: string
  /** `own`: a new network namespace holding only its loopback; `host`: the host's (`hostNetwork`). */
  network: 'own' | 'host'
  mounts?: readonly BindMount[]
}

/** Unpacks `image` (`<layout>:<tag>`) with umoci into the new bundle directory `bundle`; returns its spec. */
export async function unpackBundle(umoci: string, image: string, bundle: string): Promise<RuntimeSpec> {
  await rm(bundle, { recursive: true, force: true })
  execFileSync(umoci, ['unpack', '--image', image, bundle], { stdio: ['ignore', 'ignore', 'pipe'] })
  return readSpec(bundle)
}

/** The bundle's config.json. */
export async function readSpec(bundle: string): Promise<RuntimeSpec> {
  return JSON.parse(await readFile(join(bundle, 'config.json'), 'utf8')) as RuntimeSpec
}

/**
 * Rewrites the bundle's config.json as a kubelet would for a container with
 * `allowPrivilegeEscalation: false` and `capabilities: { drop: [ALL] }`, plus `options`; the
 * image's user, environment and working directory stay. Returns the spec written.
 */
export async function configureBundle(bundle: string, options: BundleOptions): Promise<RuntimeSpec> {
  const spec = await readSpec(bundle)
  spec.process.args = [...options.entrypoint, ...options.args]
  // Its stdio are the runtime's own (a pod's log), not a terminal.
  spec.process.terminal = false
  spec.process.env = [
    ...(spec.process.env ?? []),
    ...Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${v}`),
  ]
  spec.process.noNewPrivileges = true
  spec.process.capabilities = { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] }
  spec.root.readonly = options.readOnlyRoot
  spec.mounts = [
    ...(spec.mounts ?? []),
    ...(options.mounts ?? []).map((m) => ({
      destination: m.destination,
      type: 'bind',
      source: m.source,
      options: ['rbind', 'ro', 'nosuid', 'nodev', 'noexec'],
    })),
  ]
  spec.linux ??= {}
  const linux = spec.linux
  linux.namespaces = (linux.namespaces ?? []).filter((n) => n.type !== 'network')
  if (options.network === 'own') linux.namespaces.push({ type: 'network' })
  linux.resources = { ...linux.resources, memory: { limit: options.memoryLimitBytes } }
  linux.cgroupsPath = options.cgroupsPath
  await writeFile(join(bundle, 'config.json'), JSON.stringify(spec, null, 2))
  return spec
}
