/**
 * @module discovery — which resources the server has, and Kind ↔ resource mapping.
 *
 * Uses aggregated discovery (`apidiscovery.k8s.io/v2`: two requests for the whole
 * server) and falls back to the legacy walk (`/api`, `/apis`, then one request per
 * group version) when the server does not offer it. Results are cached; a lookup
 * that misses refreshes the cache once, so a CRD installed after start is found.
 */
import { EdgeopError } from '../core/errors.ts'
import type { Transport } from '../transport/transport.ts'
import type { ResourceType } from './resource.ts'

/** Accept header asking for aggregated discovery, v2 then v2beta1, then legacy JSON. */
export const ACCEPT_AGGREGATED_DISCOVERY =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json'

/** One discovered resource (a {@link ResourceType} plus what discovery says about it). */
export interface DiscoveredResource extends ResourceType {
  /** Kind of the objects, e.g. `Deployment`; `''` when aggregated discovery names none. */
  kind: string
  /** Verbs the server supports on it (`get`, `list`, `watch`, …); `[]` when not reported. */
  verbs: string[]
  /** kubectl short names, e.g. `deploy`; {@link RestMapper.mapping} matches them. */
  shortNames: string[]
  /** Singular name, e.g. `deployment`; `''` when not reported. {@link RestMapper.mapping} matches it. */
  singular: string
  /** Its subresources, e.g. `status`, `scale`. */
  subresources: string[]
}

/** A group with its versions in preference order (first = preferred). */
export interface DiscoveredGroup {
  /** API group; `''` for the core group. */
  group: string
  /** Served versions, the preferred one first. */
  versions: string[]
}

/** Everything discovery found. */
export interface DiscoverySnapshot {
  /** Every served group: the core group (`/api`) first, then `/apis` in server order. */
  groups: DiscoveredGroup[]
  /** Every top-level resource of every served version; subresources are listed on their parent. */
  resources: DiscoveredResource[]
  /** Whether aggregated discovery was used. */
  aggregated: boolean
}

interface AggregatedResource {
  resource: string
  responseKind?: { group?: string; version?: string; kind?: string }
  scope?: 'Namespaced' | 'Cluster'
  singularResource?: string
  verbs?: string[]
  shortNames?: string[]
  subresources?: { subresource: string }[]
}
interface AggregatedList {
  kind?: string
  items?: {
    metadata?: { name?: string }
    versions?: { version: string; resources?: AggregatedResource[] }[]
  }[]
}
interface LegacyResource {
  name: string
  namespaced: boolean
  kind: string
  verbs?: string[]
  shortNames?: string[]
  singularName?: string
}

/** Fetches discovery from the server. */
export async function discover(transport: Transport, signal?: AbortSignal): Promise<DiscoverySnapshot> {
  const opts = signal === undefined ? {} : { signal }
  const [core, apis] = await Promise.all([
    transport.request<AggregatedList>({
      method: 'GET',
      path: '/api',
      accept: ACCEPT_AGGREGATED_DISCOVERY,
      ...opts,
    }),
    transport.request<AggregatedList>({
      method: 'GET',
      path: '/apis',
      accept: ACCEPT_AGGREGATED_DISCOVERY,
      ...opts,
    }),
  ])
  if (core?.kind === 'APIGroupDiscoveryList' && apis?.kind === 'APIGroupDiscoveryList') {
    return fromAggregated([...(core.items ?? []), ...(apis.items ?? [])])
  }
  return legacyDiscover(transport, opts)
}

function fromAggregated(items: NonNullable<AggregatedList['items']>): DiscoverySnapshot {
  const groups: DiscoveredGroup[] = []
  const resources: DiscoveredResource[] = []
  for (const item of items) {
    const group = item.metadata?.name ?? ''
    const versions = item.versions ?? []
    groups.push({ group, versions: versions.map((v) => v.version) })
    for (const v of versions) {
      for (const r of v.resources ?? []) {
        resources.push({
          group,
          version: v.version,
          resource: r.resource,
          namespaced: r.scope === 'Namespaced',
          kind: r.responseKind?.kind ?? '',
          verbs: r.verbs ?? [],
          shortNames: r.shortNames ?? [],
          singular: r.singularResource ?? '',
          subresources: (r.subresources ?? []).map((s) => s.subresource),
        })
      }
    }
  }
  return { groups, resources, aggregated: true }
}

async function legacyDiscover(
  transport: Transport,
  opts: { signal?: AbortSignal },
): Promise<DiscoverySnapshot> {
  const core = await transport.request<{ versions?: string[] }>({ method: 'GET', path: '/api', ...opts })
  const apis = await transport.request<{
    groups?: { name: string; versions: { version: string }[]; preferredVersion?: { version: string } }[]
  }>({ method: 'GET', path: '/apis', ...opts })
  const groups: DiscoveredGroup[] = [{ group: '', versions: core.versions ?? ['v1'] }]
  for (const g of apis.groups ?? []) {
    const preferred = g.preferredVersion?.version
    const versions = g.versions.map((v) => v.version)
    groups.push({
      group: g.name,
      versions: preferred ? [preferred, ...versions.filter((v) => v !== preferred)] : versions,
    })
  }
  const lists = await Promise.all(
    groups.flatMap((g) =>
      g.versions.map(async (version) => {
        const path = g.group === '' ? `/api/${version}` : `/apis/${g.group}/${version}`
        const list = await transport.request<{ resources?: LegacyResource[] }>({
          method: 'GET',
          path,
          ...opts,
        })
        return { group: g.group, version, resources: list.resources ?? [] }
      }),
    ),
  )
  const resources: DiscoveredResource[] = []
  for (const l of lists) {
    const subs = new Map<string, string[]>()
    for (const r of l.resources) {
      const [base, sub] = r.name.split('/', 2)
      if (sub !== undefined && base !== undefined) subs.set(base, [...(subs.get(base) ?? []), sub])
    }
    for (const r of l.resources) {
      if (r.name.includes('/')) continue
      resources.push({
        group: l.group,
        version: l.version,
        resource: r.name,
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: r.verbs ?? [],
        shortNames: r.shortNames ?? [],
        singular: r.singularName ?? '',
        subresources: subs.get(r.name) ?? [],
      })
    }
  }
  return { groups, resources, aggregated: false }
}

/** What to look up: a kind (`group` + `kind`) or a resource (`group` + `resource`), optionally at a version. */
export type MappingQuery =
  | { group: string; version?: string; kind: string }
  | { group: string; version?: string; resource: string }

/**
 * Maps Kind ↔ resource and scope, from cached discovery.
 *
 * Guarantees: a lookup that misses refreshes discovery once before failing (so a
 * CRD created after start is found); concurrent refreshes share one request set.
 */
export class RestMapper {
  readonly #transport: Transport
  #snapshot: DiscoverySnapshot | undefined
  #refreshing: Promise<DiscoverySnapshot> | undefined

  /** Sends nothing until the first lookup. Share one per cluster, e.g. {@link KubeClient.mapper}. */
  constructor(transport: Transport) {
    this.#transport = transport
  }

  /** The cached discovery, fetched on first use. */
  async snapshot(signal?: AbortSignal): Promise<DiscoverySnapshot> {
    return this.#snapshot ?? this.refresh(signal)
  }

  /** Drops the cache and fetches discovery again. */
  refresh(signal?: AbortSignal): Promise<DiscoverySnapshot> {
    this.#refreshing ??= discover(this.#transport, signal)
      .then((s) => {
        this.#snapshot = s
        return s
      })
      .finally(() => {
        this.#refreshing = undefined
      })
    return this.#refreshing
  }

  /** The resource for a kind or a resource name; the group's preferred version when none is given. */
  async mapping(query: MappingQuery, signal?: AbortSignal): Promise<DiscoveredResource> {
    const found = find(await this.snapshot(signal), query)
    if (found) return found
    const again = find(await this.refresh(signal), query)
    if (again) return again
    const what = 'kind' in query ? `kind ${query.kind}` : `resource ${query.resource}`
    const gv =
      query.group === ''
        ? (query.version ?? 'core')
        : `${query.group}${query.version ? `/${query.version}` : ''}`
    throw new EdgeopError('EDGEOP_ERR_DISCOVERY', `the server has no ${what} in ${gv}`, {
      step: 'discovery lookup',
    })
  }

  /** The resource for an object's `apiVersion` and `kind`. */
  forApiVersionKind(apiVersion: string, kind: string, signal?: AbortSignal): Promise<DiscoveredResource> {
    const i = apiVersion.lastIndexOf('/')
    const group = i < 0 ? '' : apiVersion.slice(0, i)
    const version = i < 0 ? apiVersion : apiVersion.slice(i + 1)
    return this.mapping({ group, version, kind }, signal)
  }
}

function find(s: DiscoverySnapshot, q: MappingQuery): DiscoveredResource | undefined {
  const version = q.version ?? s.groups.find((g) => g.group === q.group)?.versions[0]
  const matches = (r: DiscoveredResource): boolean =>
    r.group === q.group &&
    r.version === version &&
    ('kind' in q
      ? r.kind === q.kind
      : r.resource === q.resource || r.singular === q.resource || r.shortNames.includes(q.resource))
  return s.resources.find(matches)
}
