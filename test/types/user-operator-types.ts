/**
 * @module user-operator-types — what a user's operator writes, type-checked (never run) under
 * `strict` and `exactOptionalPropertyTypes` by user-operator-types.test.ts. A line under
 * `@ts-expect-error` must not compile; every other line must.
 */
import type { InformerFactory } from '../../src/cache/index.ts'
import type { KubeClient, ResourceType } from '../../src/client/index.ts'
import {
  allOf,
  anyOf,
  type ControllerOptions,
  generationChanged,
  type MappedWatch,
  type Predicate,
} from '../../src/controller/index.ts'
import type { KubeObject } from '../../src/core/index.ts'
import { waitFor } from '../../src/testing/index.ts'

interface Secret extends KubeObject {
  data?: Record<string, string>
}
declare const SECRETS: ResourceType<Secret>
declare const client: KubeClient
declare const factory: InformerFactory
declare const maybeNamespace: string | undefined

export async function f7(): Promise<void> {
  // F7: an optional namespace passes as it is, under exactOptionalPropertyTypes.
  await client.resource(SECRETS).delete('copy', { namespace: maybeNamespace })
  await client.resource(SECRETS).get('copy', { namespace: maybeNamespace })
  await waitFor(client, SECRETS, 'copy', () => true, { namespace: maybeNamespace })

  // F7: waitFor infers the object type from a typed resource.
  const s = await waitFor(client, SECRETS, 'copy', (o) => o.data !== undefined)
  const data: Record<string, string> | undefined = s.data
  void data

  // F7: MappedWatch is generic: map receives the source's object type.
  const secrets = factory.informer({ type: SECRETS })
  const copies: MappedWatch<Secret> = {
    source: secrets,
    map: (o) => Object.keys(o.data ?? {}).map((name) => ({ name, namespace: undefined })),
  }
  const wrong: MappedWatch<Secret> = {
    source: secrets,
    // @ts-expect-error map receives a Secret: its data is no namespace
    map: (o) => [{ name: 'x', namespace: o.data }],
  }
  void wrong

  // F7: `for` takes kind, group and namespaced from the informer's resource type.
  const sync: ControllerOptions<Secret> = {
    name: 'secretsync',
    for: { source: secrets },
    watches: [copies],
    reconcile: async () => {},
  }
  void sync

  // F7: allOf and anyOf both combine predicates into one.
  const both: Predicate<Secret> = allOf<Secret>(generationChanged, anyOf<Secret>(generationChanged))
  void both
}
