/**
 * @module reconciler — what an operator author writes: a function from a key to the world made right.
 */
import { EdgeopError } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'

/** Which object to reconcile. Namespace is undefined for cluster-scoped objects. */
export interface ReconcileRequest {
  /**
   * The member cluster the object is in, for a controller of one (`ControllerOptions.cluster`,
   * multicluster-runtime's `mcreconcile.Request.ClusterName`); undefined for the home cluster.
   */
  cluster?: string
  /** The object's namespace; undefined for cluster-scoped objects. */
  namespace: string | undefined
  /** The object's name. */
  name: string
}

/**
 * What a reconcile asks for next:
 * - `undefined`: done; nothing until the object (or something mapped to it) changes;
 * - `{ requeueAfterMs }`: check again after that long (a poll, not a failure: resets the retry count);
 * - `{ requeue: true }`: again soon, rate-limited (as controller-runtime's `Requeue: true`).
 */
export type ReconcileResult = undefined | { requeueAfterMs: number } | { requeue: true }

/** Per-reconcile context. */
export interface ReconcileContext {
  /** Aborted at shutdown or when the reconcile timeout passes: stop work, return or throw. */
  signal: AbortSignal
  /** A logger with `controller`, `object` and `reconcileID` bound to every line. */
  log: Logger
  /** Unique per reconcile, for correlating log lines. */
  reconcileId: string
}

/**
 * A reconciler. It must be idempotent and level-based: read current state (from the
 * cache), compare it with the desired state, act on the difference. Throw to retry
 * with backoff; throw {@link TerminalError} when retrying cannot help. A bare `return`
 * (`Promise<void>`, which TypeScript before 6 does not accept as `undefined`) means done.
 */
export type Reconciler = (
  request: ReconcileRequest,
  context: ReconcileContext,
  // biome-ignore lint/suspicious/noConfusingVoidType: a return type: an async body with a bare `return` is Promise<void>
) => Promise<ReconcileResult | void>

/**
 * A failure that retrying cannot fix (an invalid spec). The controller records it and
 * does not retry until the object changes (controller-runtime `reconcile.TerminalError`).
 */
export class TerminalError extends EdgeopError {
  /** Code `EDGEOP_ERR_TERMINAL`, step `reconcile`, not retryable; `cause` is kept. */
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('EDGEOP_ERR_TERMINAL', message, { step: 'reconcile', retryable: false, cause: options.cause })
    this.name = 'TerminalError'
  }
}

/** True for a {@link TerminalError} from any copy of edgeop. */
export function isTerminalError(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'EDGEOP_ERR_TERMINAL'
}

/** Key ↔ request (`namespace/name` or `name`). */
export function requestKey(r: ReconcileRequest): string {
  return r.namespace ? `${r.namespace}/${r.name}` : r.name
}
