/**
 * @module stores — runs an informer unit test once per store: eager; compact fed parsed objects (kept
 * as their JSON); compact fed stubs of the objects' bytes, as the client's keepBytes mode feeds it.
 */
import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import { test } from 'node:test'
import type { ConfigMap } from '../../src/api/index.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import { CONFIG_MAP_V1 } from '../../src/codec/protobuf/kinds.generated.ts'
import { isEncodedObject } from '../../src/core/encoded-object.ts'
import type { KubeObject } from '../../src/core/types.ts'
import type { ListerWatcher } from '../../src/watch/lister-watcher.ts'
import { keepingBytes } from './fake-lister-watcher.ts'

export const STORE_MODES = ['eager', 'compact', 'compact from bytes'] as const
/** The live modes that also read ConfigMaps in protobuf (the type carries CONFIG_MAP_V1). */
const PROTOBUF_MODES = ['eager, protobuf', 'compact, protobuf'] as const
export type StoreMode = (typeof STORE_MODES)[number] | (typeof PROTOBUF_MODES)[number]
const current = new AsyncLocalStorage<StoreMode>()

/**
 * The modes of integration suites: both stores, over JSON and over protobuf (the real client feeds the compact
 * store bytes with keepBytes, JSON or protobuf).
 */
export const LIVE_STORE_MODES: readonly StoreMode[] = ['eager', 'compact', ...PROTOBUF_MODES]

/** ConfigMaps as the running test reads them: with their protobuf kind in the protobuf modes. */
export function configMaps(): ResourceType<ConfigMap> {
  return storeMode().endsWith('protobuf')
    ? { ...CORE_TYPES.configMaps, protobuf: CONFIG_MAP_V1 }
    : CORE_TYPES.configMaps
}

/** Registers `fn` as one test per store mode. */
export function eachStore(
  name: string,
  fn: () => Promise<void>,
  modes: readonly StoreMode[] = STORE_MODES,
): void {
  for (const mode of modes) test(`${name} [${mode} store]`, () => current.run(mode, fn))
}

/** The informer options that select the running test's store (for a factory's defaults). */
export function storeOptions(): { store?: 'compact' } {
  return storeMode().startsWith('eager') ? {} : { store: 'compact' }
}

/** The running test's source and store option (a `keepBytes` source unless managedFields are kept). */
export function withStore<L extends ListerWatcher>(lw: L, options: { stripManagedFields?: boolean } = {}) {
  const mode = current.getStore() ?? 'eager'
  if (mode.startsWith('eager')) return { lw, store: {} }
  const bytes = mode === 'compact from bytes' && options.stripManagedFields !== false
  return { lw: bytes ? keepingBytes(lw) : lw, store: { store: 'compact' as const } }
}

/** Asserts that handlers got plain, decoded objects (never a compact store's stub). */
export function assertPlain(...objects: KubeObject[]): void {
  for (const o of objects) assert.equal(isEncodedObject(o), false, 'a handler got a stub')
}

/** The running test's store mode (for names that must differ between the runs). */
export function storeMode(): StoreMode {
  return current.getStore() ?? 'eager'
}
