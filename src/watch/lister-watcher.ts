/**
 * @module lister-watcher — the two calls the watch engine needs, and their adapter to the client.
 */

import type { WatchStream } from '../client/raw-watch.ts'
import type { ResourceType } from '../client/resource.ts'
import type { ResourceClient } from '../client/resource-client.ts'
import type { KubeList, KubeObject } from '../core/types.ts'
import type { ListRequest, WatchRequest } from './events.ts'

/** A watch request as sent: the engine's request plus timeouts chosen by the driver. */
export interface WatchCall extends WatchRequest {
  /** Server-side timeout of the watch, randomised between the min and max watch timeouts. */
  timeoutSeconds: number
  /** Tear the stream down when no byte arrives for this long. */
  idleTimeoutMs: number
}

/** What the engine lists and watches. Implement it to feed the engine from anything. */
export interface ListerWatcher<T extends KubeObject = KubeObject> {
  /** Names the watched collection in logs and errors, e.g. `configmaps in ns-a (app=web)`. */
  readonly describe: string
  /** The resource listed, when it comes from a `ResourceClient` ({@link listerWatcher}'s do). */
  readonly type?: ResourceType | undefined
  /** Lists one page of the collection. */
  list(request: ListRequest, signal: AbortSignal): Promise<KubeList<T>>
  /** Resolves when the server accepted the watch; rejects with the API error if it refused. */
  watch(call: WatchCall, signal: AbortSignal): Promise<WatchStream<T>>
}

/** Label/field selection of a watched collection. */
export interface Selectors {
  /** Label selector, e.g. `app=web,tier!=db`. */
  labelSelector?: string
  /** Field selector, e.g. `metadata.name=node-1`. */
  fieldSelector?: string
  /** Watch PartialObjectMetadata only (for controllers that need no bodies). */
  metadataOnly?: boolean
  /** The wire format (see the client's `FormatOptions`): protobuf by default for types that carry their protobuf kind. */
  format?: 'json' | 'protobuf'
  /** A decode hint: `metadata.managedFields` may be left out (the informer strips them anyway). */
  dropManagedFields?: boolean
}

/** How objects come off the wire. */
export interface DecodeChoice {
  /** Objects as `EncodedObject` stubs of their bytes (for a compact store); see the client's `keepBytes`. */
  keepBytes?: boolean
}

/** A {@link ListerWatcher} over a resource client (its namespace is the scope). */
export function listerWatcher<T extends KubeObject>(
  client: ResourceClient<T>,
  selectors: Selectors = {},
  decode: DecodeChoice = {},
): ListerWatcher<T> {
  const { labelSelector, fieldSelector, metadataOnly, format, dropManagedFields } = selectors
  const sel = {
    labelSelector: labelSelector || undefined,
    fieldSelector: fieldSelector || undefined,
    format,
    dropManagedFields,
    ...(decode.keepBytes ? { keepBytes: true } : {}),
  }
  const where = client.namespace ? ` in ${client.namespace}` : ''
  const which = [labelSelector, fieldSelector].filter(Boolean).join(', ')
  return {
    type: client.type,
    describe: `${client.type.resource}${client.type.group ? `.${client.type.group}` : ''}${where}${which ? ` (${which})` : ''}`,
    list: (request, signal) =>
      (metadataOnly
        ? client.listMetadata({ ...request, ...sel, signal })
        : client.list({ ...request, ...sel, signal })) as Promise<KubeList<T>>,
    watch: (call, signal) => client.openWatch({ ...call, ...sel, signal, metadataOnly }),
  }
}
