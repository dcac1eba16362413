/**
 * @module call-options — the options a {@link ResourceClient} verb takes: per call (signal, timeout), for
 * server-side apply, and for lists.
 */

import type { FormatOptions } from '../codec/content-negotiation.ts'
import type { ListOptions } from './list-options.ts'

/** Per-call options every verb accepts. */
export interface CallOptions {
  /** Aborting it ends the call at any stage (throttle, credentials, request, retry wait) with `EDGEOP_ERR_ABORTED`. */
  signal?: AbortSignal
  /** Deadline for this call (ms); overrides the client default. */
  timeoutMs?: number
}

/** Options of {@link ResourceClient.apply}. */
export interface ApplyOptions extends CallOptions {
  /** Required by the server for apply. */
  fieldManager: string
  /** Take ownership of fields other managers own instead of failing with 409. */
  force?: boolean
  /** `dryRun=All`: the server validates and answers as if applied, and persists nothing. */
  dryRun?: boolean
}

/** Options of {@link ResourceClient.list}, {@link ResourceClient.listPages} and {@link ResourceClient.listMetadata}. */
export interface ListCallOptions extends ListOptions, CallOptions, FormatOptions {
  /**
   * Return the items as `EncodedObject` stubs of their JSON bytes (scanned metadata, managedFields cut,
   * decoded on demand with `materialize`) instead of parsed objects: for a compact store. Default false.
   */
  keepBytes?: boolean
}

/** The transport fields of `o`: its signal and timeout, when given. */
export function callFields(o: CallOptions): { signal?: AbortSignal; timeoutMs?: number } {
  return {
    signal: o.signal,
    timeoutMs: o.timeoutMs,
  }
}
