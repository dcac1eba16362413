/**
 * @module index-funcs — index functions every controller needs.
 */
import type { KubeObject } from '../core/types.ts'
import { type IndexFunc, metadataIndexFunc } from './store.ts'

/** Conventional name for {@link controllerUidIndexFunc}. */
export const CONTROLLER_UID_INDEX = 'controller-uid'

/**
 * Indexes an object under the UID of its controlling owner (the owner reference with
 * `controller: true`), so owned objects are found from their owner without a list. Reads metadata only.
 */
export const controllerUidIndexFunc: IndexFunc = metadataIndexFunc((obj) => {
  const ref = obj.metadata?.ownerReferences?.find((r) => r.controller)
  return ref ? [ref.uid] : []
})

/** Indexes an object under the UID of every owner. */
export const ownerUidIndexFunc: IndexFunc = metadataIndexFunc((obj) =>
  (obj.metadata?.ownerReferences ?? []).map((r) => r.uid),
)

/** Indexes an object under the value of one label (nothing when absent). */
export function labelIndexFunc<T extends KubeObject = KubeObject>(label: string): IndexFunc<T> {
  return metadataIndexFunc((obj) => {
    const v = obj.metadata?.labels?.[label]
    return v === undefined ? [] : [v]
  })
}
