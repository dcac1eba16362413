/**
 * @module assets — where the control plane's binaries come from.
 *
 * Order: `EDGEOP_TEST_ASSETS` (a directory of prebuilt binaries, like envtest's
 * `KUBEBUILDER_ASSETS`); else the version-keyed build cache (usable without Go); else
 * `build-binaries.sh` builds them from the Go module proxy. Without Go and without
 * either directory the caller gets an error saying exactly that: integration tests are
 * never skipped silently.
 */
import { constants, existsSync, readdirSync, readFileSync } from 'node:fs'
import { access } from 'node:fs/promises'
import { homedir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { exec } from './exec.ts'

const HERE = dirname(fileURLToPath(import.meta.url))

/** The build script (prints the binary directory on its last stdout line). */
export const BUILD_SCRIPT = join(HERE, 'build-binaries.sh')

/** The one file that records the versions. */
export const VERSIONS_FILE = join(HERE, 'versions.env')

/** Every binary the control plane may run. */
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

/** How often to look whether another build has finished. */
const BUILD_WAIT_POLL_MS = 5_000

/** Versions from `versions.env`. */
export interface Versions {
  kubernetes: string
  etcd: string
  kwok: string
}

/** Resolved binaries. */
export interface Binaries {
  dir: string
  versions: Versions
  /** Absolute path of a binary. */
  path(name: BinaryName): string
}

/** Raised when no binaries can be found or built; `message` says what to do. */
export class AssetsUnavailableError extends Error {
  override readonly name = 'AssetsUnavailableError'
}

/** Parses `versions.env` (`KEY=value` lines, `#` comments). */
export function readVersions(file = VERSIONS_FILE): Versions {
  const values = new Map<string, string>()
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^\s*([A-Z_]+)=(\S+)\s*$/.exec(line)
    if (m) values.set(m[1]!, m[2]!)
  }
  const get = (key: string): string => {
    const v = values.get(key)
    if (v === undefined) throw new Error(`${file}: ${key} is missing`)
    return v
  }
  return { kubernetes: get('KUBERNETES_VERSION'), etcd: get('ETCD_VERSION'), kwok: get('KWOK_VERSION') }
}

/** edgeop's cache root: `EDGEOP_CACHE_DIR`, else `$XDG_CACHE_HOME/edgeop`, else `~/.cache/edgeop`. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.EDGEOP_CACHE_DIR || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'edgeop')
}

/** The cache directory `build-binaries.sh` writes to for these versions. */
export function cachedBinaryDir(versions: Versions, env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'bin', `k8s-${versions.kubernetes}-etcd-${versions.etcd}-kwok-${versions.kwok}`)
}

async function missingIn(dir: string, names: readonly BinaryName[]): Promise<BinaryName[]> {
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

/** PIDs of other running `build-binaries.sh` processes (a second build would race the first). */
function runningBuilds(): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      if (cmd.some((arg) => arg.endsWith('build-binaries.sh')) && cmd[0]?.endsWith('bash'))
        pids.push(Number(entry))
    } catch {
      // the process ended while we looked
    }
  }
  return pids
}

/** Options for {@link resolveBinaries}. */
export interface ResolveOptions {
  /** Binaries that must be present (default: all of {@link BINARY_NAMES}). */
  need?: readonly BinaryName[]
  /** Progress messages (default: stderr). */
  log?: (message: string) => void
  env?: NodeJS.ProcessEnv
}

/**
 * Finds or builds the binaries. Builds go through `build-binaries.sh` with its progress
 * on our stderr; if another build is already running, waits for it instead of racing it.
 */
export async function resolveBinaries(options: ResolveOptions = {}): Promise<Binaries> {
  const env = options.env ?? process.env
  const need = options.need ?? BINARY_NAMES
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`))
  const versions = readVersions()

  const assets = env.EDGEOP_TEST_ASSETS
  if (assets !== undefined && assets !== '') {
    const missing = await missingIn(assets, need)
    if (missing.length > 0) {
      throw new AssetsUnavailableError(`EDGEOP_TEST_ASSETS=${assets} has no executable ${missing.join(', ')}`)
    }
    return binaries(assets, versions)
  }

  const dir = cachedBinaryDir(versions, env)
  for (;;) {
    if ((await missingIn(dir, need)).length === 0) return binaries(dir, versions)
    const others = runningBuilds()
    if (others.length === 0) break
    log(`control plane: waiting for the running build-binaries.sh (pid ${others.join(', ')}) to finish…`)
    await delay(BUILD_WAIT_POLL_MS)
  }

  if (!goInstalled(env)) {
    throw new AssetsUnavailableError(
      [
        `The integration tests need kube-apiserver ${versions.kubernetes}, etcd ${versions.etcd} and kwok ${versions.kwok}.`,
        `They are not in ${dir}, and Go is not installed to build them.`,
        'Either install Go >= 1.26 (https://go.dev/dl) and run again (the first build takes 5-30 min; about 7 min on a 2-core machine with a warm module cache),',
        `or set EDGEOP_TEST_ASSETS to a directory holding: ${BINARY_NAMES.join(' ')}.`,
      ].join('\n'),
    )
  }
  log(`control plane: building binaries with ${BUILD_SCRIPT} (cached in ${dir} afterwards)…`)
  const { stdout } = await exec('bash', [BUILD_SCRIPT], { env, inheritStderr: true })
  const built = stdout.trim().split('\n').pop() ?? dir
  const missing = await missingIn(built, need)
  if (missing.length > 0)
    throw new AssetsUnavailableError(`build finished but ${built} lacks ${missing.join(', ')}`)
  return binaries(built, versions)
}
