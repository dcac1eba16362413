/**
 * @module errors — the one error shape every edgeop layer throws.
 *
 * Callers match on `err.code` (a stable string), never on `instanceof` alone: an
 * application may load two copies of edgeop (library + bundled artifact), and
 * `instanceof` fails across copies. Every error says which step failed and
 * whether retrying the same operation can succeed.
 */

/** Stable error codes. New codes may be added; existing ones never change meaning. */
export type ErrorCode =
  | 'EDGEOP_ERR_CONFIG'
  | 'EDGEOP_ERR_YAML'
  | 'EDGEOP_ERR_AUTH'
  | 'EDGEOP_ERR_EXEC_PLUGIN'
  | 'EDGEOP_ERR_API'
  | 'EDGEOP_ERR_NETWORK'
  | 'EDGEOP_ERR_TIMEOUT'
  | 'EDGEOP_ERR_ABORTED'
  | 'EDGEOP_ERR_DECODE'
  | 'EDGEOP_ERR_DISCOVERY'
  | 'EDGEOP_ERR_WATCH'
  | 'EDGEOP_ERR_SYNC'
  | 'EDGEOP_ERR_LEADER'
  | 'EDGEOP_ERR_RECONCILE'
  | 'EDGEOP_ERR_TERMINAL'
  | 'EDGEOP_ERR_INVALID'
  | 'EDGEOP_ERR_FILE'
  | 'EDGEOP_ERR_CONTROL_PLANE'
  | 'EDGEOP_ERR_CIRCUIT_OPEN'

/** Options for {@link EdgeopError}. */
export interface EdgeopErrorOptions {
  /** The step that failed, e.g. `'load kubeconfig'`, `'GET /api/v1/pods'`. */
  step?: string
  /** Whether repeating the same operation later may succeed. Default false. */
  retryable?: boolean
  /** The underlying error. Never a value that carries a secret. */
  cause?: unknown
}

/**
 * Base class of every error edgeop throws.
 *
 * Guarantees: `code` is one of {@link ErrorCode}; `message` never contains a
 * token, key, password or exec-plugin output.
 */
export class EdgeopError extends Error {
  /** Stable code to match on; never changes meaning. */
  readonly code: ErrorCode
  /** The step that failed, e.g. `load kubeconfig`; undefined when it is the whole call. */
  readonly step: string | undefined
  /** Whether the same operation may succeed later. */
  readonly retryable: boolean

  /** Creates an error; `options.cause` must not carry a secret. */
  constructor(code: ErrorCode, message: string, options: EdgeopErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'EdgeopError'
    this.code = code
    this.step = options.step
    this.retryable = options.retryable ?? false
  }
}

/** True when `err` is an edgeop error (from any copy of the library), optionally with the given code. */
export function isEdgeopError(err: unknown, code?: ErrorCode): err is EdgeopError {
  if (typeof err !== 'object' || err === null) return false
  const c = (err as { code?: unknown }).code
  if (typeof c !== 'string' || !c.startsWith('EDGEOP_ERR_')) return false
  return code === undefined || c === code
}

/** The message of any thrown value, for logs. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message
  return typeof err === 'string' ? err : (JSON.stringify(err) ?? String(err))
}
