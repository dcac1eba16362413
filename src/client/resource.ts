/**
 * @module resource — how a kind of object is addressed on the API server.
 */
import type {
  ConfigMap,
  CustomResourceDefinition,
  Deployment,
  Event,
  Lease,
  Namespace,
  Node,
  Pod,
  Secret,
  Service,
} from '../api/index.ts'
import type { KindSchema } from '../codec/protobuf/kind-schema.ts'
import { EdgeopError } from '../core/errors.ts'
import type { KubeObject } from '../core/types.ts'

/**
 * A resource addressed by group/version/resource and scope. `T` is the object type it serves:
 * type-only, so `client.resource(type)` and informers infer it (`CORE_TYPES` entries carry theirs;
 * annotate your own, e.g. `const statefulSets: ResourceType<StatefulSet> = { … }`).
 */
export interface ResourceType<T extends KubeObject = KubeObject> {
  /** API group; `''` for the core group (`/api/v1`). */
  group: string
  /** API version within the group, e.g. `v1`; must be one the server serves for this resource. */
  version: string
  /** Plural resource name, e.g. `deployments`. */
  resource: string
  /** Whether objects live in a namespace. */
  namespaced: boolean
  /** Kind, e.g. `Deployment`. Optional; used to fill `kind` on apply bodies. */
  kind?: string
  /** Type-only, never set: the object type `T` this resource serves, so that it can be inferred. */
  readonly objectType?: T
  /**
   * The kind's protobuf schema (from `edgeop/protobuf`, e.g. `POD_V1`): lists and watches then ask for
   * protobuf, decode it into the same JSON-shaped objects, and fall back to JSON when the server answers JSON.
   */
  readonly protobuf?: KindSchema
}

/** `group/version`, or `version` for the core group. */
export function apiVersionOf(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`
}

const SEGMENT = /^[a-z0-9]([-a-z0-9.:]*[a-z0-9])?$/i

/** Rejects path segments that would change the URL's meaning (`..`, `/`, `?`, empty). */
function segment(kind: string, value: string): string {
  if (!SEGMENT.test(value) || value.includes('..')) {
    throw new EdgeopError('EDGEOP_ERR_INVALID', `invalid ${kind} ${JSON.stringify(value)} in request path`, {
      step: 'build request path',
    })
  }
  return encodeURIComponent(value)
}

/**
 * The path of a collection or of one object, e.g.
 * `/apis/apps/v1/namespaces/ns/deployments/web/status`.
 *
 * @param namespace required for namespaced types unless listing across all namespaces (undefined)
 */
export function resourcePath(
  type: ResourceType,
  namespace: string | undefined,
  name?: string,
  subresource?: string,
): string {
  let p =
    type.group === ''
      ? `/api/${segment('version', type.version)}`
      : `/apis/${segment('group', type.group)}/${segment('version', type.version)}`
  if (type.namespaced && namespace !== undefined) p += `/namespaces/${segment('namespace', namespace)}`
  if (!type.namespaced && namespace !== undefined) {
    throw new EdgeopError(
      'EDGEOP_ERR_INVALID',
      `${type.resource} is cluster-scoped; no namespace may be given`,
      {
        step: 'build request path',
      },
    )
  }
  p += `/${segment('resource', type.resource)}`
  if (name !== undefined) p += `/${segment('name', name)}`
  if (subresource !== undefined) {
    if (name === undefined) throw new EdgeopError('EDGEOP_ERR_INVALID', 'a subresource needs an object name')
    p += `/${segment('subresource', subresource)}`
  }
  return p
}

/** Well-known built-in resource types the runtime itself uses, each typed with its object (`edgeop/api`). */
export const CORE_TYPES: {
  /** `v1` Namespace (cluster-scoped). */
  readonly namespaces: ResourceType<Namespace>
  /** `v1` ConfigMap. */
  readonly configMaps: ResourceType<ConfigMap>
  /** `v1` Secret. */
  readonly secrets: ResourceType<Secret>
  /** `v1` Service. */
  readonly services: ResourceType<Service>
  /** `v1` Pod. */
  readonly pods: ResourceType<Pod>
  /** `v1` Node (cluster-scoped). */
  readonly nodes: ResourceType<Node>
  /** `apps/v1` Deployment. */
  readonly deployments: ResourceType<Deployment>
  /** `coordination.k8s.io/v1` Lease. */
  readonly leases: ResourceType<Lease>
  /** `events.k8s.io/v1` Event. */
  readonly events: ResourceType<Event>
  /** `apiextensions.k8s.io/v1` CustomResourceDefinition (cluster-scoped). */
  readonly customResourceDefinitions: ResourceType<CustomResourceDefinition>
} = {
  namespaces: { group: '', version: 'v1', resource: 'namespaces', namespaced: false, kind: 'Namespace' },
  configMaps: { group: '', version: 'v1', resource: 'configmaps', namespaced: true, kind: 'ConfigMap' },
  secrets: { group: '', version: 'v1', resource: 'secrets', namespaced: true, kind: 'Secret' },
  services: { group: '', version: 'v1', resource: 'services', namespaced: true, kind: 'Service' },
  pods: { group: '', version: 'v1', resource: 'pods', namespaced: true, kind: 'Pod' },
  nodes: { group: '', version: 'v1', resource: 'nodes', namespaced: false, kind: 'Node' },
  deployments: {
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    namespaced: true,
    kind: 'Deployment',
  },
  leases: {
    group: 'coordination.k8s.io',
    version: 'v1',
    resource: 'leases',
    namespaced: true,
    kind: 'Lease',
  },
  events: { group: 'events.k8s.io', version: 'v1', resource: 'events', namespaced: true, kind: 'Event' },
  customResourceDefinitions: {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    resource: 'customresourcedefinitions',
    namespaced: false,
    kind: 'CustomResourceDefinition',
  },
}
