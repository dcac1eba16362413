/**
 * @module exec-credentials — a CredentialProvider that runs a client-go credential (exec) plugin.
 *
 * Behaviour follows client-go `plugin/pkg/client/auth/exec`: the plugin gets
 * `KUBERNETES_EXEC_INFO`, its stderr goes to ours, stdin only when interactive; its
 * ExecCredential is cached until `expirationTimestamp` (no leeway; forever without one);
 * concurrent callers share one run; a 401 with the cached credential forces a new run.
 * Neither plugin output nor arguments nor env values ever appear in an error.
 */
import { formatByteLimit } from '../core/bounded-file.ts'
import { type Clock, realClock } from '../core/clock.ts'
import { EdgeopError } from '../core/errors.ts'
import { abortError, raceCredentials } from './abortable.ts'
import type { CredentialProvider, Credentials } from './cluster-config.ts'
import {
  EXEC_PLUGIN_TIMEOUT_MS,
  type ExecRunner,
  type ExecRunResult,
  MAX_EXEC_PLUGIN_STDOUT_BYTES,
  spawnExecPlugin,
} from './exec-plugin-runner.ts'

/** The ExecCredential versions client-go still accepts (v1alpha1 was removed in client-go 1.24). */
export const EXEC_API_VERSIONS: readonly string[] = [
  'client.authentication.k8s.io/v1',
  'client.authentication.k8s.io/v1beta1',
]
/** The accepted `interactiveMode` values (client-go `clientcmd/api/v1.ExecInteractiveMode`). */
export const EXEC_INTERACTIVE_MODES: readonly string[] = ['Never', 'IfAvailable', 'Always']
/** `interactiveMode` when v1beta1 leaves it unset (client-go `clientcmd/api/v1/defaults.go`); v1 has no default. */
export const DEFAULT_BETA_INTERACTIVE_MODE = 'IfAvailable'

/** The exec section of a kubeconfig user. */
export interface ExecPluginConfig {
  /** Program name (looked up in PATH) or absolute path. */
  command: string
  /** Arguments, passed as they are (no shell). Default none. */
  args?: readonly string[]
  /** Added to the parent environment. */
  env?: readonly { name: string; value: string }[]
  /** ExecCredential version; one of {@link EXEC_API_VERSIONS}. The plugin's reply must carry the same one. */
  apiVersion: string
  /** Shown when the command is not found. */
  installHint?: string | undefined
  /** Put {@link ExecClusterInfo} into `KUBERNETES_EXEC_INFO`. */
  provideClusterInfo?: boolean
  /** `Never` | `IfAvailable` | `Always`; required for v1. */
  interactiveMode?: string | undefined
}

/** `spec.cluster` of `KUBERNETES_EXEC_INFO` (client-go `clientauthentication/v1.Cluster` JSON). */
export interface ExecClusterInfo {
  /** API server URL of the context (client-go `clientauthentication.Cluster.Server`). */
  server: string
  /** SNI / verification name, when the cluster sets one. */
  'tls-server-name'?: string
  /** Present (true) only when the cluster skips server verification. */
  'insecure-skip-tls-verify'?: boolean
  /** Base64 of the CA PEM. */
  'certificate-authority-data'?: string
  /** The cluster's `proxy-url`, when set. */
  'proxy-url'?: string
  /** Present (true) only when the cluster sets `disable-compression`. */
  'disable-compression'?: boolean
  /** The cluster's `client.authentication.k8s.io/exec` extension, passed through unchanged (client-go `Cluster.Config`). */
  config?: unknown
}

/** Options for {@link ExecCredentialProvider}. */
export interface ExecCredentialProviderOptions {
  /** The plugin to run; validated by the constructor. */
  exec: ExecPluginConfig
  /** The kubeconfig user, for messages. */
  user: string
  /** Sent to the plugin only when `provideClusterInfo` is true. */
  cluster?: ExecClusterInfo
  /** `now()` is compared with the credential's `expirationTimestamp`. Default {@link realClock}. */
  clock?: Clock
  /** The parent environment. Default `process.env`. */
  env?: Record<string, string | undefined>
  /** Whether stdin is a terminal. Default `process.stdin.isTTY`. */
  stdinIsTTY?: boolean
  /** Starts the plugin. Default {@link spawnExecPlugin}. */
  run?: ExecRunner
  /** How long one run may take before the plugin is stopped (it runs again on the next `get`). Default {@link EXEC_PLUGIN_TIMEOUT_MS}. */
  timeoutMs?: number
}

function execError(message: string, retryable = false): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_EXEC_PLUGIN', message, { step: 'run exec credential plugin', retryable })
}

/**
 * Credentials from an exec plugin.
 *
 * @throws EdgeopError `EDGEOP_ERR_CONFIG` from the constructor when the exec section is
 *   invalid (no command, unsupported apiVersion, missing or unknown interactiveMode).
 */
export class ExecCredentialProvider implements CredentialProvider {
  /** `exec plugin "<command>"`, for messages; never contains arguments or env values. */
  readonly describe: string
  readonly #exec: ExecPluginConfig
  readonly #mode: string
  readonly #user: string
  readonly #cluster: ExecClusterInfo | undefined
  readonly #clock: Clock
  readonly #env: Record<string, string | undefined>
  readonly #tty: boolean
  readonly #run: ExecRunner
  readonly #timeoutMs: number
  #cached: Credentials | undefined
  #inflight: Promise<Credentials> | undefined

  /** Validates `options.exec` (see the class's `@throws`); the plugin first runs on the first `get`. */
  constructor(options: ExecCredentialProviderOptions) {
    const { exec, user } = options
    this.describe = `exec plugin "${exec.command}"`
    const invalid = (why: string): EdgeopError =>
      new EdgeopError('EDGEOP_ERR_CONFIG', `user "${user}": ${why}`, {
        step: 'configure exec credential plugin',
      })
    if (!exec.command) throw invalid('exec.command must be specified to use an exec plugin')
    if (!exec.apiVersion) throw invalid(`exec.apiVersion must be specified to use ${this.describe}`)
    if (!EXEC_API_VERSIONS.includes(exec.apiVersion)) {
      throw invalid(
        `${this.describe} uses apiVersion "${exec.apiVersion}", which is not supported (use ${EXEC_API_VERSIONS.join(' or ')})`,
      )
    }
    const mode =
      exec.interactiveMode || (exec.apiVersion.endsWith('/v1beta1') ? DEFAULT_BETA_INTERACTIVE_MODE : '')
    if (!mode)
      throw invalid(
        `interactiveMode must be specified to use ${this.describe} with apiVersion ${exec.apiVersion}`,
      )
    if (!EXEC_INTERACTIVE_MODES.includes(mode)) {
      throw invalid(
        `invalid interactiveMode "${mode}" for ${this.describe} (use Never, IfAvailable or Always)`,
      )
    }
    this.#exec = exec
    this.#mode = mode
    this.#user = user
    this.#cluster = exec.provideClusterInfo ? options.cluster : undefined
    this.#clock = options.clock ?? realClock
    this.#env = options.env ?? process.env
    this.#tty = options.stdinIsTTY ?? Boolean(process.stdin.isTTY)
    this.#run = options.run ?? spawnExecPlugin
    this.#timeoutMs = options.timeoutMs ?? EXEC_PLUGIN_TIMEOUT_MS
  }

  /** The cached credential while `now <= expiresAt`; otherwise runs the plugin once for all concurrent callers. */
  get(signal?: AbortSignal): Promise<Credentials> {
    if (signal?.aborted) return Promise.reject(abortError(this.describe, signal))
    const cached = this.#cached
    if (cached && (cached.expiresAt === undefined || this.#clock.now() <= cached.expiresAt))
      return Promise.resolve(cached)
    this.#inflight ??= this.#refresh().finally(() => {
      this.#inflight = undefined
    })
    return raceCredentials(this.#inflight, signal, this.describe)
  }

  /**
   * After a 401 with `used`: forgets the cached credential if it is `used`, so the next
   * `get` runs the plugin again. Always true: the next `get` returns either a credential
   * that differs from `used` or a fresh plugin result.
   */
  invalidate(used: Credentials): boolean {
    const c = this.#cached
    if (
      c &&
      c.token === used.token &&
      c.clientCertificate === used.clientCertificate &&
      c.clientKey === used.clientKey
    ) {
      this.#cached = undefined
    }
    return true
  }

  async #refresh(): Promise<Credentials> {
    const exec = this.#exec
    const interactive = this.#mode === 'Always' || (this.#mode === 'IfAvailable' && this.#tty)
    if (this.#mode === 'Always' && !this.#tty) {
      throw execError(
        `${this.describe} (user "${this.#user}") has interactiveMode Always but standard input is not a terminal`,
      )
    }
    const spec = this.#cluster ? { interactive, cluster: this.#cluster } : { interactive }
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(this.#env)) if (v !== undefined) env[k] = v
    for (const e of exec.env ?? []) env[e.name] = e.value
    env.KUBERNETES_EXEC_INFO = JSON.stringify({ apiVersion: exec.apiVersion, kind: 'ExecCredential', spec })
    const who = `${this.describe} (user "${this.#user}")`
    let result: ExecRunResult
    try {
      result = await this.#run({
        command: exec.command,
        args: [...(exec.args ?? [])],
        env,
        interactive,
        timeoutMs: this.#timeoutMs,
        maxStdoutBytes: MAX_EXEC_PLUGIN_STDOUT_BYTES,
      })
    } catch (err) {
      // The spawn error is not kept as the cause: Node attaches the arguments to it.
      const code = String((err as { code?: unknown }).code ?? 'unknown error')
      if (code === 'ENOENT') {
        throw execError(`${who}: executable not found${exec.installHint ? `\n\n${exec.installHint}` : ''}`)
      }
      throw execError(`${who} could not be started (${code})`, true)
    }
    if (result.stopped === 'timeout') {
      throw execError(
        `${who} did not finish within ${this.#timeoutMs / 1000} s (edgeop's limit for an exec plugin); it was stopped, and the next request runs it again`,
        true,
      )
    }
    if (result.stopped === 'output-limit') {
      throw execError(
        `${who} printed more than ${formatByteLimit(MAX_EXEC_PLUGIN_STDOUT_BYTES)} on stdout (edgeop's limit for an ExecCredential); it was stopped`,
        true,
      )
    }
    if (result.exitCode !== 0) {
      const how =
        result.exitCode === null
          ? `was killed by signal ${result.signal ?? 'unknown'}`
          : `exited with code ${result.exitCode}`
      throw execError(`${who} ${how}; its stderr is shown above`, true)
    }
    const credentials = this.#decode(result.stdout, who)
    this.#cached = credentials
    return credentials
  }

  /** Validates the plugin's ExecCredential; messages describe the problem, never the output. */
  #decode(stdout: string, who: string): Credentials {
    let out: unknown
    try {
      out = JSON.parse(stdout)
    } catch {
      throw execError(`${who} printed output that is not a JSON ExecCredential`)
    }
    const o = (typeof out === 'object' && out !== null ? out : {}) as Record<string, unknown>
    if (o.kind !== 'ExecCredential' || o.apiVersion !== this.#exec.apiVersion) {
      throw execError(
        `${who} returned an object that is not an ExecCredential of apiVersion ${this.#exec.apiVersion}`,
      )
    }
    const status = o.status
    if (typeof status !== 'object' || status === null)
      throw execError(`${who} returned an ExecCredential without status`)
    const s = status as Record<string, unknown>
    const text = (k: string): string | undefined =>
      typeof s[k] === 'string' && s[k] ? (s[k] as string) : undefined
    const token = text('token')
    const cert = text('clientCertificateData')
    const key = text('clientKeyData')
    if (!token && Boolean(cert) !== Boolean(key))
      throw execError(`${who} returned only one of clientCertificateData and clientKeyData`)
    if (!token && !cert) throw execError(`${who} returned neither a token nor a client certificate and key`)
    const credentials: Credentials = token ? { token } : { clientCertificate: cert, clientKey: key }
    if (s.expirationTimestamp !== undefined && s.expirationTimestamp !== null) {
      const at = typeof s.expirationTimestamp === 'string' ? Date.parse(s.expirationTimestamp) : Number.NaN
      if (Number.isNaN(at))
        throw execError(`${who} returned an expirationTimestamp that is not an RFC 3339 time`)
      credentials.expiresAt = at
    }
    return credentials
  }
}
