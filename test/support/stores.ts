/**
 * @module stores — runs an informer unit test once per store: eager; compact fed parsed objects (kept
 * as their JSON); compact fed stubs of the objects' bytes, as the client's keepBytes mode feeds it.
 */
import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import { test } from 'node:test'
import type { KubeObject } from '../../src/core/types.ts'
import { isWireObject } from '../../src/core/wire-object.ts'
import type { ListerWatcher } from '../../src/watch/lister-watcher.ts'
import { keepingBytes } from './fake-lister-watcher.ts'

export const STORE_MODES = ['eager', 'compact', 'compact from bytes'] as const
export type StoreMode = (typeof STORE_MODES)[number]
const current = new AsyncLocalStorage<StoreMode>()

/** The modes of integration suites: the real client feeds the compact store bytes (keepBytes). */
export const LIVE_STORE_MODES = ['eager', 'compact'] as const

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
  return storeMode() === 'eager' ? {} : { store: 'compact' }
}

/** The running test's source and store option (a `keepBytes` source unless managedFields are kept). */
export function withStore<L extends ListerWatcher>(lw: L, options: { stripManagedFields?: boolean } = {}) {
  const mode = current.getStore() ?? 'eager'
  if (mode === 'eager') return { lw, store: {} }
  const bytes = mode === 'compact from bytes' && options.stripManagedFields !== false
  return { lw: bytes ? keepingBytes(lw) : lw, store: { store: 'compact' as const } }
}

/** Asserts that handlers got plain, decoded objects (never a compact store's stub). */
export function assertPlain(...objects: KubeObject[]): void {
  for (const o of objects) assert.equal(isWireObject(o), false, 'a handler got a stub')
}

/** The running test's store mode (for names that must differ between the runs). */
export function storeMode(): StoreMode {
  return current.getStore() ?? 'eager'
}
