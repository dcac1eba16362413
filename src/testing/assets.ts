/**
 * @module assets — where the control plane's binaries (etcd, kube-apiserver, …) come from.
 *
 * Order, like controller-runtime's envtest (`KUBEBUILDER_ASSETS`, then its download cache):
 * 1. `EDGEOP_TEST_ASSETS` — a directory of prebuilt binaries; when set it is the only place looked at;
 * 2. the version-keyed build cache, `<EDGEOP_BUILD_CACHE_DIR or ~/.cache/edgeop>/bin/k8s-…-etcd-…-kwok-…`
 *    (usable without Go);
 * 3. `build-binaries.sh` (shipped in the package) builds them from the Go module proxy into that cache.
 *
 * Without Go and without either directory the caller gets one error naming both ways to provide them:
 * nothing is skipped silently.
 */
import { constants, existsSync, readdirSync, readFileSync } from 'node:fs'
import { access } from 'node:fs/promises'
import { homedir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { EdgeopError } from '../core/errors.ts'
import { exec } from './exec.ts'

/** Environment variable naming a directory of prebuilt binaries (envtest's `KUBEBUILDER_ASSETS`). */
export const TEST_ASSETS_ENV = 'EDGEOP_TEST_ASSETS'

/** Environment variable overriding edgeop's cache root (default `$XDG_CACHE_HOME/edgeop`, else `~/.cache/edgeop`). */
export const CACHE_DIR_ENV = 'EDGEOP_BUILD_CACHE_DIR'

/** Every binary the build script makes (the project's own harness also runs controllers and kwok). */
export const BINARY_NAMES = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'etcd',
  'etcdctl',
  'kwok',
] as const

/** A binary name from {@link BINARY_NAMES}. */
export type BinaryName = (typeof BINARY_NAMES)[number]

/** What a test environment runs: the same two binaries envtest runs. */
export const CONTROL_PLANE_BINARIES: readonly BinaryName[] = ['etcd', 'kube-apiserver']

/** The build script's groups (its `EDGEOP_BUILD_ONLY` values) and the binaries each makes. */
const BUILD_GROUPS: Record<'etcd' | 'k8s' | 'kwok', readonly BinaryName[]> = {
  etcd: ['etcd', 'etcdctl'],
  k8s: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'],
  kwok: ['kwok'],
}

/** How often to look whether another build has finished: a build takes minutes, a look costs nothing. */
const BUILD_WAIT_POLL_MS = 5_000

/** The step named in every error of this module. */
const STEP = 'resolve control-plane binaries'

/** Versions from `versions.env`. */
export interface Versions {
  /** Kubernetes version of kube-apiserver and the controllers, e.g. `1.37.2`. */
  kubernetes: string
  /** etcd version, e.g. `3.6.16`. */
  etcd: string
  /** kwok version (the project's own harness only). */
  kwok: string
}

/** Resolved binaries. */
export interface Binaries {
  /** The directory they are in. */
  dir: string
  /** The versions the build script records (a prebuilt directory is assumed to match them). */
  versions: Versions
  /** Absolute path of a binary. */
  path(name: BinaryName): string
}

/** Raised when no binaries can be found or built (code `EDGEOP_ERR_CONFIG`); `message` says what to do. */
export class AssetsUnavailableError extends EdgeopError {
  /** Creates the error; `message` names the directories looked at and the ways to provide binaries. */
  constructor(message: string, cause?: unknown) {
    super('EDGEOP_ERR_CONFIG', message, { step: STEP, cause })
    this.name = 'AssetsUnavailableError'
  }
}

let root: string | undefined

/**
 * The root of the edgeop package (the directory of its package.json), found by walking up from this
 * module, so it works from the sources (src/testing/) and from the bundle (dist/lib/, any chunk).
 */
export function packageRoot(): string {
  if (root !== undefined) return root
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'edgeop') {
          root = dir
          return dir
        }
      } catch {
        // not a readable manifest: keep walking up
      }
    }
    const parent = dirname(dir)
    if (parent === dir) throw new AssetsUnavailableError('cannot find the edgeop package root')
    dir = parent
  }
}

/** The build script (prints the binary directory on its last stdout line). */
export function buildScript(): string {
  return join(packageRoot(), 'test/controlplane/build-binaries.sh')
}

/** The one file that records the versions. */
export function versionsFile(): string {
  return join(packageRoot(), 'test/controlplane/versions.env')
}

/** Parses `versions.env` (`KEY=value` lines, `#` comments). */
export function readVersions(file = versionsFile()): Versions {
  const values = new Map<string, string>()
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^\s*([A-Z_]+)=(\S+)\s*$/.exec(line)
    if (m) values.set(m[1]!, m[2]!)
  }
  const get = (key: string): string => {
    const v = values.get(key)
    if (v === undefined) throw new AssetsUnavailableError(`${file}: ${key} is missing`)
    return v
  }
  return { kubernetes: get('KUBERNETES_VERSION'), etcd: get('ETCD_VERSION'), kwok: get('KWOK_VERSION') }
}

/** edgeop's cache root: `EDGEOP_BUILD_CACHE_DIR`, else `$XDG_CACHE_HOME/edgeop`, else `~/.cache/edgeop`. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env[CACHE_DIR_ENV] || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'edgeop')
}

/** The cache directory `build-binaries.sh` writes to for these versions. */
export function cachedBinaryDir(versions: Versions, env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'bin', `k8s-${versions.kubernetes}-etcd-${versions.etcd}-kwok-${versions.kwok}`)
}

/** The binaries of `names` that `dir` lacks (or that are not executable). */
export async function missingBinaries(dir: string, names: readonly BinaryName[]): Promise<BinaryName[]> {
  const missing: BinaryName[] = []
  for (const name of names) {
    try {
      await access(join(dir, name), constants.X_OK)
    } catch {
      missing.push(name)
    }
  }
  return missing
}

function binaries(dir: string, versions: Versions): Binaries {
  return { dir, versions, path: (name) => join(dir, name) }
}

function goInstalled(env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? '').split(delimiter).some((p) => p !== '' && existsSync(join(p, 'go')))
}

/**
 * PIDs of other running `build-binaries.sh` processes that build into the cache of `env` (a second
 * build would race the first); a build into another cache is none of our business.
 */
function runningBuilds(env: NodeJS.ProcessEnv): number[] {
  const ours = cacheRoot(env)
  const pids: number[] = []
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return pids // not Linux: no way to look, build anyway
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      if (!cmd.some((arg) => arg.endsWith('build-binaries.sh')) || !cmd[0]?.endsWith('bash')) continue
      const theirs = Object.fromEntries(
        readFileSync(`/proc/${entry}/environ`, 'utf8')
          .split('\0')
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      )
      if (cacheRoot(theirs) === ours) pids.push(Number(entry))
    } catch {
      // the process ended while we looked
    }
  }
  return pids
}

/** The build script's groups that make `need` (all of them: no `EDGEOP_BUILD_ONLY`). */
export function buildGroupsFor(need: readonly BinaryName[]): ('etcd' | 'k8s' | 'kwok')[] {
  return (Object.keys(BUILD_GROUPS) as ('etcd' | 'k8s' | 'kwok')[]).filter((g) =>
    BUILD_GROUPS[g].some((b) => need.includes(b)),
  )
}

/** Options for {@link resolveBinaries}. */
export interface ResolveOptions {
  /** Binaries that must be present (default: {@link CONTROL_PLANE_BINARIES}). */
  need?: readonly BinaryName[]
  /** Progress messages (default: stderr). */
  log?: (message: string) => void
  /** Environment to read `EDGEOP_TEST_ASSETS`, `EDGEOP_BUILD_CACHE_DIR` and `PATH` from (default: `process.env`). */
  env?: NodeJS.ProcessEnv
}

/**
 * Finds or builds the binaries in the order of the module documentation. A build runs
 * `build-binaries.sh` (only the groups `need` requires) with its progress on our stderr; if another
 * build is already running, waits for it instead of racing it. Rejects with
 * {@link AssetsUnavailableError} when neither a directory nor Go is there, or a directory lacks a binary.
 */
export async function resolveBinaries(options: ResolveOptions = {}): Promise<Binaries> {
  const env = options.env ?? process.env
  const need = options.need ?? CONTROL_PLANE_BINARIES
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`))
  const versions = readVersions()

  const assets = env[TEST_ASSETS_ENV]
  if (assets !== undefined && assets !== '') {
    const missing = await missingBinaries(assets, need)
    if (missing.length > 0)
      throw new AssetsUnavailableError(`${TEST_ASSETS_ENV}=${assets} has no executable ${missing.join(', ')}`)
    return binaries(assets, versions)
  }

  const dir = cachedBinaryDir(versions, env)
  for (;;) {
    if ((await missingBinaries(dir, need)).length === 0) return binaries(dir, versions)
    const others = runningBuilds(env)
    if (others.length === 0) break
    log(`control plane: waiting for the running build-binaries.sh (pid ${others.join(', ')}) to finish…`)
    await delay(BUILD_WAIT_POLL_MS)
  }

  if (!goInstalled(env)) {
    throw new AssetsUnavailableError(
      [
        `A test control plane needs ${need.join(', ')} (kube-apiserver ${versions.kubernetes}, etcd ${versions.etcd}).`,
        `They are not in ${dir}, and Go is not installed to build them. Either:`,
        `- set ${TEST_ASSETS_ENV} to a directory holding ${need.join(' ')} (for example the one setup-envtest downloads), or`,
        `- install Go >= 1.26 (https://go.dev/dl) and run again: ${buildScript()} builds them into ${dir} (5-30 min once).`,
      ].join('\n'),
    )
  }
  const groups = buildGroupsFor(need)
  const only = groups.length === Object.keys(BUILD_GROUPS).length ? [undefined] : groups
  let built = dir
  for (const group of only) {
    log(`control plane: building ${group ?? 'all binaries'} with ${buildScript()} (cached in ${dir})…`)
    const buildEnv = group === undefined ? env : { ...env, EDGEOP_BUILD_ONLY: group }
    try {
      const { stdout } = await exec('bash', [buildScript()], { env: buildEnv, inheritStderr: true })
      built = stdout.trim().split('\n').pop() ?? dir
    } catch (err) {
      throw new AssetsUnavailableError(
        `building the control-plane binaries failed (see the output above)`,
        err,
      )
    }
  }
  const missing = await missingBinaries(built, need)
  if (missing.length > 0)
    throw new AssetsUnavailableError(`the build finished but ${built} lacks ${missing.join(', ')}`)
  return binaries(built, versions)
}
