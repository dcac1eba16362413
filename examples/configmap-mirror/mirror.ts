/**
 * @module configmap-mirror — the README's controller: every ConfigMap labelled `mirror=true` is
 * copied to `<name>-copy` in its namespace, owned by the original.
 *
 * Two informers feed one controller: the originals (its primary resource) and the copies (owned
 * objects, so deleting or editing a copy wakes its original's reconcile). The reconcile reads
 * only the cache and writes with server-side apply, and only when the copy drifted.
 */
import {
  applyIfDrifted,
  CORE_TYPES,
  type Controller,
  type KubeObject,
  type Manager,
  withControllerReference,
} from 'edgeop'

/** The label that asks for a copy, and its value. */
export const MIRROR_LABEL = 'mirror'

/** The label every copy carries, naming its original (the copies' informer selects on it). */
export const MIRROR_OF_LABEL = 'mirror-of'

/** The field manager of the copies' server-side apply. */
export const FIELD_MANAGER = 'configmap-mirror'

/** A ConfigMap, as far as the mirror reads it. */
export interface ConfigMap extends KubeObject {
  data?: Record<string, string>
}

/** Registers the mirror controller with `manager`; it starts with `manager.run`. */
export function addMirror(manager: Manager): Controller<ConfigMap> {
  const originals = manager.factory.informer<ConfigMap>({
    type: CORE_TYPES.configMaps,
    labelSelector: `${MIRROR_LABEL}=true`,
  })
  const copies = manager.factory.informer<ConfigMap>({
    type: CORE_TYPES.configMaps,
    labelSelector: MIRROR_OF_LABEL,
  })
  // Options rather than `new Controller(...)`: the manager builds it with its clock and logger.
  return manager.add<ConfigMap>({
    name: 'configmap-mirror',
    for: { source: originals, kind: 'ConfigMap', group: '', namespaced: true },
    owns: [{ source: copies }], // a copy's event wakes its owner
    async reconcile({ namespace, name }, { signal }) {
      const original = originals.store.get(`${namespace}/${name}`)
      // Deleted (or unlabelled): the garbage collector removes the copy through its owner reference.
      if (!original) return
      const copy = withControllerReference<ConfigMap>(original, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `${name}-copy`, namespace, labels: { [MIRROR_OF_LABEL]: name } },
        data: original.data ?? {},
      })
      await applyIfDrifted(
        manager.client.resource<ConfigMap>(CORE_TYPES.configMaps, namespace),
        copy,
        copies.store.get(`${namespace}/${name}-copy`),
        FIELD_MANAGER,
        signal,
      )
    },
  })
}
