/**
 * @module wait-for — wait until one object satisfies a predicate, as a controller's test asserts what
 * the controller did ("eventually the AppService is Ready").
 */

import type { KubeClient } from '../client/kube-client.ts'
import type { ResourceType } from '../client/resource.ts'
import type { KubeObject } from '../core/types.ts'
import { isNotFound } from '../transport/api-error.ts'
import { type EventuallyOptions, eventually } from './eventually.ts'

/** Longest part of the last seen object quoted in a timeout error. */
const MAX_LAST_SEEN_CHARS = 500

/** Options for {@link waitFor}. */
export interface WaitForOptions extends Omit<EventuallyOptions, 'what'> {
  /** Namespace of a namespaced type; default the client's default namespace. */
  namespace?: string
}

/**
 * Polls `GET type/name` until `predicate(object)` is true and returns that object. An object that does
 * not exist yet is "not yet", as is a predicate that throws (so `assert…` calls work as predicates).
 * Rejects with `EDGEOP_ERR_TIMEOUT` quoting the last seen `status` (or "not found").
 *
 * @example
 * const app = await waitFor(client, appServices, 'web', (a) => a.status?.phase === 'Ready', { namespace: ns })
 */
export async function waitFor<T extends KubeObject = KubeObject>(
  client: KubeClient,
  type: ResourceType,
  name: string,
  predicate: (object: T) => boolean,
  options: WaitForOptions = {},
): Promise<T> {
  const namespace = type.namespaced ? (options.namespace ?? client.defaultNamespace) : undefined
  const api = client.resource<T>(type, namespace)
  let last: T | undefined
  return eventually(
    async () => {
      try {
        last = await api.get(name)
      } catch (err) {
        if (!isNotFound(err)) throw err
        last = undefined
        return undefined
      }
      return predicate(last) ? last : undefined
    },
    {
      ...options,
      what: () => {
        const where = `${type.resource}${namespace === undefined ? '' : ` ${namespace}`}/${name}`
        const seen =
          last === undefined
            ? 'not found'
            : `last status ${JSON.stringify((last as { status?: unknown }).status ?? null).slice(0, MAX_LAST_SEEN_CHARS)}`
        return `${where} to satisfy the predicate (${seen})`
      },
    },
  )
}
