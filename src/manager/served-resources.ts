/**
 * @module served-resources — at start, find watched resources the API server does not serve (a CRD not
 * installed), so the manager fails in seconds with one line instead of retrying 404s until the cache
 * sync timeout.
 *
 * controller-runtime does the same through its RESTMapper when a `Kind` source starts ("if kind is a
 * CRD, it should be installed before calling Start", `pkg/internal/source/kind.go`).
 */
import type { MappingQuery } from '../client/discovery.ts'
import type { ResourceType } from '../client/resource.ts'
import { EdgeopError, isEdgeopError } from '../core/errors.ts'

/** The slice of `KubeClient.mapper` used here (a seam for tests). */
export interface ResourceMapper {
  mapping(query: MappingQuery, signal?: AbortSignal): Promise<unknown>
}

/**
 * The types in `types` that discovery does not list at their group and version.
 *
 * Guarantees: a type counts as unserved only when discovery answered and lacked it (the mapper
 * refreshes once before saying so); any other failure (network, 403, abort) rejects, so a caller
 * never reports a CRD as missing because the server could not be asked.
 */
export async function findUnserved(
  mapper: ResourceMapper,
  types: readonly ResourceType[],
  signal?: AbortSignal,
): Promise<ResourceType[]> {
  const missing = await Promise.all(
    types.map((t) =>
      mapper.mapping({ group: t.group, version: t.version, resource: t.resource }, signal).then(
        () => undefined,
        (err: unknown) => {
          if (isEdgeopError(err, 'EDGEOP_ERR_DISCOVERY')) return t
          throw err
        },
      ),
    ),
  )
  return missing.filter((t) => t !== undefined)
}

/** The name a CRD serving `type` must have: `<plural>.<group>` (the core group has no CRDs: just the plural). */
export function crdName(type: Pick<ResourceType, 'group' | 'resource'>): string {
  return type.group === '' ? type.resource : `${type.resource}.${type.group}`
}

/**
 * The error {@link Manager.run} rejects with when watched resources are not served.
 *
 * Guarantees: `code` is `EDGEOP_ERR_DISCOVERY` (the code the RESTMapper uses for "the server has no
 * such resource"); the message is one line naming each resource with its version and the CRD to
 * install; `crds` lists those CRD names for callers that print their own install hint.
 */
export class UnservedResourcesError extends EdgeopError {
  /** The watched resource types the server does not serve. */
  readonly resources: readonly ResourceType[]
  /** The CRD name that would serve each of {@link resources}, in the same order. */
  readonly crds: readonly string[]

  /** Names each of `resources` and its CRD in one line. */
  constructor(resources: readonly ResourceType[]) {
    const crds = resources.map(crdName)
    const what = resources.map((t) => `${crdName(t)}/${t.version}`).join(', ')
    const one = resources.length === 1
    super(
      'EDGEOP_ERR_DISCOVERY',
      `the API server does not serve ${what}: ${one ? 'it is' : 'they are'} watched but not installed; ` +
        `install the CustomResourceDefinition${one ? '' : 's'} ${crds.map((c) => `"${c}"`).join(', ')} ` +
        'before starting',
      { step: 'check that watched resources are served', retryable: false },
    )
    this.resources = resources
    this.crds = crds
  }
}
