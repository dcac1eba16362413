/**
 * @module token-file — a CredentialProvider that reads a bearer token from a file and re-reads it as it rotates.
 *
 * Same cadence as client-go `transport.NewCachedFileTokenSource`: each read is treated
 * as valid for 1 min and refreshed 10 s before that, lazily, so the file is read at most
 * about every 50 s. A 401 with the cached token forces a re-read on the next `get`.
 */
import { type Clock, realClock } from '../core/clock.ts'
import { EdgeopError, isEdgeopError } from '../core/errors.ts'
import { type Logger, noopLogger } from '../core/log.ts'
import { abortError, raceCredentials } from './abortable.ts'
import type { CredentialProvider, Credentials } from './cluster-config.ts'
import { MAX_TOKEN_FILE_BYTES, type ReadTextFile, readTextFile } from './read-text-file.ts'

/** A read token counts as valid this long (client-go `transport/token_source.go`: `period = time.Minute`). */
export const TOKEN_FILE_PERIOD_MS = 60_000
/** Refresh this long before the period ends (client-go `cachingTokenSource` leeway: 10 s). */
export const TOKEN_FILE_LEEWAY_MS = 10_000

/** Options for {@link TokenFileProvider}. */
export interface TokenFileProviderOptions {
  /** Absolute path of the token file. */
  path: string
  /** Monotonic time that ages the cached token. Default {@link realClock}. */
  clock?: Clock
  /** Receives a warning when a re-read fails and the last good token stays in use. */
  logger?: Logger
  /** Reads the file. Default {@link readTextFile} (at most 1 MiB, {@link MAX_TOKEN_FILE_BYTES}). */
  readFile?: ReadTextFile
  /**
   * Used while the file cannot be read and no token was read yet (a kubeconfig user with
   * both `token` and `tokenFile`: client-go sends the static token when the file fails).
   */
  fallbackToken?: string
}

/**
 * Bearer token from a file (projected service-account tokens, kubeconfig `tokenFile`).
 * Content is whitespace-trimmed; an empty file is an error. When a re-read fails, the last
 * good token keeps being used and the file is tried again on the next `get`.
 */
export class TokenFileProvider implements CredentialProvider {
  /** `token file <path>`, for messages. */
  readonly describe: string
  readonly #path: string
  readonly #clock: Clock
  readonly #logger: Logger
  readonly #read: ReadTextFile
  readonly #fallback: string | undefined
  #cached: Credentials | undefined
  #readAt = 0
  #stale = true
  #inflight: Promise<Credentials> | undefined

  /** Reads nothing yet: the first {@link TokenFileProvider.get} reads it (and fails if it cannot, unless `fallbackToken` is set). */
  constructor(options: TokenFileProviderOptions) {
    this.#path = options.path
    this.describe = `token file ${options.path}`
    this.#clock = options.clock ?? realClock
    this.#logger = options.logger ?? noopLogger
    this.#read = options.readFile ?? readTextFile
    this.#fallback = options.fallbackToken || undefined
  }

  /** The cached token while it is younger than period − leeway; otherwise one shared re-read. */
  get(signal?: AbortSignal): Promise<Credentials> {
    if (signal?.aborted) return Promise.reject(abortError(this.describe, signal))
    const fresh = this.#clock.monotonic() < this.#readAt + TOKEN_FILE_PERIOD_MS - TOKEN_FILE_LEEWAY_MS
    if (this.#cached && !this.#stale && fresh) return Promise.resolve(this.#cached)
    this.#inflight ??= this.#reread().finally(() => {
      this.#inflight = undefined
    })
    return raceCredentials(this.#inflight, signal, this.describe)
  }

  /** After a 401: if `used` carries the cached token, the next `get` re-reads the file. Always true. */
  invalidate(used: Credentials): boolean {
    if (this.#cached && used.token === this.#cached.token) this.#stale = true
    return true
  }

  async #reread(): Promise<Credentials> {
    let token: string
    try {
      token = (await this.#read(this.#path, { what: 'token file', maxBytes: MAX_TOKEN_FILE_BYTES })).trim()
      if (!token)
        throw new EdgeopError('EDGEOP_ERR_AUTH', `${this.describe} is empty`, {
          step: 'read token file',
          retryable: true,
        })
    } catch (err) {
      const error = isEdgeopError(err)
        ? err
        : new EdgeopError(
            'EDGEOP_ERR_AUTH',
            `cannot read ${this.describe}: ${String((err as { code?: unknown }).code ?? err)}`,
            {
              step: 'read token file',
              retryable: true,
              cause: err,
            },
          )
      const last = this.#cached ?? (this.#fallback ? { token: this.#fallback } : undefined)
      if (!last) throw error
      this.#logger.warn('unable to re-read the token file; using the last token', {
        path: this.#path,
        error: error.message,
      })
      return last
    }
    if (token !== this.#cached?.token) this.#cached = { token }
    this.#readAt = this.#clock.monotonic()
    this.#stale = false
    return this.#cached as Credentials
  }
}
