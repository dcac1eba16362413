/**
 * @module owner — owner references, with the scope rules the garbage collector enforces.
 */
import { EdgeopError } from '../core/errors.ts'
import type { KubeObject, OwnerReference } from '../core/types.ts'

/**
 * The controller reference to `owner` (`controller: true`, `blockOwnerDeletion: true`),
 * as controller-runtime `SetControllerReference` writes it.
 */
export function controllerReference(owner: KubeObject): OwnerReference {
  const { apiVersion, kind } = owner
  const { name, uid } = owner.metadata
  if (!apiVersion || !kind || !name || !uid) {
    throw new EdgeopError(
      'EDGEOP_ERR_INVALID',
      'an owner needs apiVersion, kind, metadata.name and metadata.uid',
      { step: 'build owner reference' },
    )
  }
  return { apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true }
}

/**
 * Returns `child` with a controller reference to `owner` (replacing an existing one
 * to the same owner). Refuses, with a clear error, what the garbage collector would
 * not honour: a namespaced owner of a cluster-scoped child, an owner in another
 * namespace, or a child already controlled by someone else.
 */
export function withControllerReference<C extends KubeObject>(owner: KubeObject, child: C): C {
  const ref = controllerReference(owner)
  const ons = owner.metadata.namespace
  const cns = child.metadata.namespace
  const what = `${child.kind ?? 'object'} ${cns ? `${cns}/` : ''}${child.metadata.name ?? ''}`
  if (ons && !cns) {
    throw new EdgeopError(
      'EDGEOP_ERR_INVALID',
      `${what} is cluster-scoped and cannot be owned by namespaced ${owner.kind} ${ons}/${owner.metadata.name}`,
      { step: 'set owner reference' },
    )
  }
  if (ons && cns && ons !== cns) {
    throw new EdgeopError(
      'EDGEOP_ERR_INVALID',
      `${what} cannot be owned by ${owner.kind} ${ons}/${owner.metadata.name}: owners must be in the same namespace`,
      { step: 'set owner reference' },
    )
  }
  const refs = child.metadata.ownerReferences ?? []
  const other = refs.find((r) => r.controller && r.uid !== ref.uid)
  if (other) {
    throw new EdgeopError(
      'EDGEOP_ERR_INVALID',
      `${what} is already controlled by ${other.kind} ${other.name}`,
      { step: 'set owner reference' },
    )
  }
  return {
    ...child,
    metadata: { ...child.metadata, ownerReferences: [...refs.filter((r) => r.uid !== ref.uid), ref] },
  }
}
