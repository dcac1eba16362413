/**
 * @module raw-watch — one watch request on a resource: its stream of events, in JSON or protobuf, without
 * reconnection (the `watch` layer's job).
 */

import type { FormatOptions } from '../codec/content-negotiation.ts'
import type { DecodeOptions } from '../codec/json-watch-decoder.ts'
import { responseFormat } from '../codec/response-format.ts'
import type { KubeObject, WatchEvent } from '../core/types.ts'
import type { Transport } from '../transport/transport.ts'
import type { CallOptions } from './call-options.ts'
import { type WatchOptions, watchQuery } from './list-options.ts'
import { type ResourceType, resourcePath } from './resource.ts'

/** Options of a raw watch. */
export interface RawWatchOptions extends WatchOptions, CallOptions, FormatOptions {
  /** ADDED, MODIFIED and DELETED objects as `EncodedObject` stubs, as {@link ListCallOptions.keepBytes}. Default false. */
  keepBytes?: boolean
  /** Tear down the stream when no byte (not even a bookmark) arrives for this long. */
  idleTimeoutMs?: number
  /** Longest accepted event (JSON line or protobuf frame) in bytes; a longer one throws `EDGEOP_ERR_DECODE`. Default {@link DEFAULT_MAX_WATCH_LINE_BYTES}. */
  maxLineBytes?: DecodeOptions['maxLineBytes']
  /** Watch metadata only (PartialObjectMetadata events). */
  metadataOnly?: boolean
}

/** An open watch stream. */
export interface WatchStream<T extends KubeObject = KubeObject> {
  /**
   * The events in server order, to iterate once; ends when the server closes the stream. A watch
   * `ERROR` event is yielded, not thrown; a bad line throws `EDGEOP_ERR_DECODE`, a lost connection an {@link ApiError}.
   */
  events: AsyncIterable<WatchEvent<T>>
  /** Closes the stream; idempotent. */
  close(): void
}

/**
 * Opens a raw watch: resolves once the server has accepted it (status and headers
 * received), rejects with an {@link ApiError} if it refused. `events` yields what
 * the server sends until it closes the stream, `close()` is called, or the signal
 * aborts. No reconnection here: that is the `watch` layer's job. `namespace` undefined: all namespaces.
 */
export async function openRawWatch<T extends KubeObject>(
  transport: Transport,
  type: ResourceType,
  namespace: string | undefined,
  o: RawWatchOptions = {},
): Promise<WatchStream<T>> {
  const collection = resourcePath(type, namespace)
  const format = responseFormat(type, o, o.metadataOnly ? 'PartialObjectMetadata' : undefined)
  const res = await transport.stream({
    method: 'GET',
    path: collection + watchQuery(o),
    accept: format.accept,
    decodeStatus: format.decodeStatus,
    signal: o.signal,
    idleTimeoutMs: o.idleTimeoutMs,
  })
  const events = format.watch<T>(res.headers['content-type'], res.body, {
    source: `watch ${collection}`,
    keepBytes: o.keepBytes,
    dropManagedFields: o.dropManagedFields,
    maxEventBytes: o.maxLineBytes,
  })
  return {
    events,
    close: () => {
      res.close()
      void events.return(undefined).catch(() => {})
    },
  }
}
