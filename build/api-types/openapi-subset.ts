/**
 * @module build/api-types/openapi-subset — which built-in API objects get types, and the part of the
 * apiserver's OpenAPI v3 documents they need.
 *
 * The roots are the objects operators touch; the subset is every schema reachable from them
 * through `$ref`, taken from the group-version documents the apiserver serves at
 * `GET /openapi/v3/<group-version>`. The same function builds the committed fixture
 * (`npm run gen:types -- --fetch`) and the subset the integration test compares it with, so a
 * Kubernetes upgrade that changes any of these schemas shows as a diff.
 */

/** A group-version document and the root kinds taken from it. */
export interface RootGroup {
  /** Path under `/openapi/v3/`, e.g. `apis/apps/v1`. */
  path: string
  /** Schema names (`components.schemas` keys) of the root kinds. */
  roots: readonly string[]
}

const CORE = 'io.k8s.api.core.v1.'
const APPS = 'io.k8s.api.apps.v1.'
const RBAC = 'io.k8s.api.rbac.v1.'

/**
 * The typed kinds. Events are `events.k8s.io/v1` (the API `EventRecorder` writes), the
 * autoscaler is `autoscaling/v2` (the only served version with metrics beyond CPU).
 */
export const ROOT_GROUPS: readonly RootGroup[] = [
  {
    path: 'api/v1',
    roots: [
      'ConfigMap',
      'Endpoints',
      'Namespace',
      'Node',
      'PersistentVolumeClaim',
      'Pod',
      'Secret',
      'Service',
      'ServiceAccount',
    ].map((k) => CORE + k),
  },
  {
    path: 'apis/apps/v1',
    roots: ['DaemonSet', 'Deployment', 'ReplicaSet', 'StatefulSet'].map((k) => APPS + k),
  },
  { path: 'apis/batch/v1', roots: ['io.k8s.api.batch.v1.CronJob', 'io.k8s.api.batch.v1.Job'] },
  { path: 'apis/coordination.k8s.io/v1', roots: ['io.k8s.api.coordination.v1.Lease'] },
  { path: 'apis/discovery.k8s.io/v1', roots: ['io.k8s.api.discovery.v1.EndpointSlice'] },
  { path: 'apis/events.k8s.io/v1', roots: ['io.k8s.api.events.v1.Event'] },
  {
    path: 'apis/networking.k8s.io/v1',
    roots: ['io.k8s.api.networking.v1.Ingress', 'io.k8s.api.networking.v1.NetworkPolicy'],
  },
  { path: 'apis/policy/v1', roots: ['io.k8s.api.policy.v1.PodDisruptionBudget'] },
  {
    path: 'apis/rbac.authorization.k8s.io/v1',
    roots: ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].map((k) => RBAC + k),
  },
  { path: 'apis/autoscaling/v2', roots: ['io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler'] },
  {
    path: 'apis/apiextensions.k8s.io/v1',
    roots: ['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition'],
  },
]

/** A JSON Schema object as the OpenAPI documents write it (only the keywords read here are named). */
export interface Schema {
  /** `#/components/schemas/<name>`. */
  $ref?: string
  /** Every other keyword. */
  [keyword: string]: unknown
}

/** One group-version document as served (only `components.schemas` is read). */
export interface OpenApiDocument {
  /** The document's components. */
  components?: { schemas?: Record<string, Schema> }
}

/** The committed fixture: the reachable schemas and where they came from. */
export interface ApiFixture {
  /** How the fixture was made. */
  source: string
  /** `gitVersion` of the apiserver it was fetched from, e.g. `v1.37.2`. */
  kubernetesVersion: string
  /** The group-version documents read, in {@link ROOT_GROUPS} order. */
  groupVersions: string[]
  /** Every reachable schema by name, names sorted. */
  schemas: Record<string, Schema>
}

const REF_PREFIX = '#/components/schemas/'

/** Names of the schemas `value` refers to (a `$ref` keyword holds a string; a property named `$ref` does not). */
export function referencedSchemas(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) for (const v of value) referencedSchemas(v, into)
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') {
        if (!v.startsWith(REF_PREFIX)) throw new Error(`unsupported $ref ${JSON.stringify(v)}`)
        into.add(v.slice(REF_PREFIX.length))
      } else referencedSchemas(v, into)
    }
  }
  return into
}

/**
 * The schemas reachable from the roots, names sorted. `documents` maps each
 * {@link RootGroup.path} to its served document. A schema several documents carry
 * (ObjectMeta, PodSpec, …) must be the same in each; a missing one is an error naming it.
 */
export function openApiSubset(documents: Record<string, OpenApiDocument>): Record<string, Schema> {
  const all = new Map<string, Schema>()
  for (const group of ROOT_GROUPS) {
    const schemas = documents[group.path]?.components?.schemas
    if (!schemas) throw new Error(`no OpenAPI document (components.schemas) for ${group.path}`)
    for (const [name, schema] of Object.entries(schemas)) if (!all.has(name)) all.set(name, schema)
  }
  const seen = new Set<string>()
  const pending = ROOT_GROUPS.flatMap((g) => g.roots)
  while (pending.length > 0) {
    const name = pending.pop()!
    if (seen.has(name)) continue
    const schema = all.get(name)
    if (!schema) throw new Error(`schema ${name} is referenced but no document defines it`)
    seen.add(name)
    pending.push(...referencedSchemas(schema))
  }
  for (const group of ROOT_GROUPS) {
    const schemas = documents[group.path]!.components!.schemas!
    for (const name of seen) {
      const here = schemas[name]
      if (here && JSON.stringify(here) !== JSON.stringify(all.get(name)))
        throw new Error(`schema ${name} differs between group-version documents (${group.path})`)
    }
  }
  return Object.fromEntries([...seen].sort().map((name) => [name, all.get(name)!]))
}
