import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { EdgeopError } from '../../src/core/errors.ts'
import {
  formatPreflight,
  leaderElectionPermissions,
  type PreflightClient,
  preflight,
} from '../../src/manager/preflight.ts'
import { ApiError } from '../../src/transport/api-error.ts'
import type { RequestSpec } from '../../src/transport/transport.ts'

const apiError = (status: number, reason: string, method = 'GET', path = '/x') =>
  new ApiError({ status, reason, message: reason.toLowerCase(), method, path })

interface FakeOptions {
  version?: () => unknown
  review?: () => unknown
  allowed?: (attrs: Record<string, unknown>) => boolean
  kinds?: string[]
}

function fakeClient(o: FakeOptions = {}) {
  const seen: RequestSpec[] = []
  const client: PreflightClient = {
    async request<T>(spec: RequestSpec): Promise<T> {
      seen.push(spec)
      if (spec.path === '/version') return (o.version?.() ?? { gitVersion: 'v1.35.0' }) as T
      if (spec.path.endsWith('/selfsubjectreviews'))
        return (o.review?.() ?? {
          status: { userInfo: { username: 'op', groups: ['system:authenticated'] } },
        }) as T
      const attrs = (spec.body as { spec: { resourceAttributes: Record<string, unknown> } }).spec
        .resourceAttributes
      const allowed = o.allowed?.(attrs) ?? true
      return { status: allowed ? { allowed } : { allowed, reason: 'no RBAC policy matched' } } as T
    },
    mapper: {
      async mapping(q) {
        const r = 'resource' in q ? q.resource : q.kind
        if (!(o.kinds ?? ['widgets']).includes(r))
          throw new EdgeopError('EDGEOP_ERR_DISCOVERY', `the server has no resource ${r} in ${q.group}`)
        return {}
      },
    },
  }
  return { client, seen }
}

const requirements = {
  resources: [{ group: 'example.com', resource: 'widgets' }],
  permissions: [
    { group: 'example.com', resource: 'widgets', verbs: ['get', 'list', 'watch'] },
    { group: 'apps', resource: 'deployments', verbs: ['get', 'patch'], namespace: 'shop' },
    { group: 'example.com', resource: 'widgets', subresource: 'status', verbs: ['update'] },
  ],
}

describe('preflight with a fake client', () => {
  test('all green: one SelfSubjectAccessReview per verb, with the exact attributes', async () => {
    const { client, seen } = fakeClient()
    const report = await preflight(client, requirements)
    assert.equal(report.ok, true)
    assert.deepEqual(report.server, { reachable: true, version: 'v1.35.0' })
    assert.deepEqual(report.identity, {
      authenticated: true,
      username: 'op',
      groups: ['system:authenticated'],
    })
    const reviews = seen.filter((s) => s.path === '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews')
    assert.equal(reviews.length, 6)
    assert.deepEqual(reviews[3]!.body, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: {
        resourceAttributes: {
          group: 'apps',
          resource: 'deployments',
          subresource: undefined,
          verb: 'get',
          namespace: 'shop',
        },
      },
    })
    assert.equal(seen[1]!.method, 'POST')
    assert.deepEqual(seen[1]!.body, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' })
    assert.equal(
      formatPreflight(report),
      [
        '[+]cluster reachable (v1.35.0)',
        '[+]authenticated as op (groups: system:authenticated)',
        '[+]resource widgets.example.com exists',
        '[+]may get widgets.example.com cluster-wide',
        '[+]may list widgets.example.com cluster-wide',
        '[+]may watch widgets.example.com cluster-wide',
        '[+]may get deployments.apps in namespace "shop"',
        '[+]may patch deployments.apps in namespace "shop"',
        '[+]may update widgets/status.example.com cluster-wide',
        '',
      ].join('\n'),
    )
  })

  test('missing resources and verbs fail, and the output carries the RBAC rules that grant them', async () => {
    const { client } = fakeClient({
      kinds: [],
      allowed: (a) => a.verb === 'get' || (a.resource === 'leases' && a.verb !== 'update'),
    })
    const report = await preflight(client, {
      ...requirements,
      permissions: [
        ...requirements.permissions,
        leaderElectionPermissions('ops'),
        { group: '', resource: 'events', verbs: ['create'] },
      ],
    })
    assert.equal(report.ok, false)
    const text = formatPreflight(report)
    assert.match(
      text,
      /\[-\]resource widgets\.example\.com is missing: the server has no resource widgets in example\.com\n/,
    )
    assert.match(text, /\[-\]may not patch deployments\.apps in namespace "shop": no RBAC policy matched\n/)
    assert.ok(
      text.endsWith(
        [
          'RBAC rules that would grant the missing permissions:',
          'ClusterRole:',
          '- apiGroups: ["example.com"]',
          '  resources: ["widgets"]',
          '  verbs: ["list", "watch"]',
          '- apiGroups: ["example.com"]',
          '  resources: ["widgets/status"]',
          '  verbs: ["update"]',
          '- apiGroups: [""]',
          '  resources: ["events"]',
          '  verbs: ["create"]',
          'Role in namespace "ops":',
          '- apiGroups: ["coordination.k8s.io"]',
          '  resources: ["leases"]',
          '  verbs: ["update"]',
          'Role in namespace "shop":',
          '- apiGroups: ["apps"]',
          '  resources: ["deployments"]',
          '  verbs: ["patch"]',
          '',
        ].join('\n'),
      ),
      text,
    )
  })

  test('an unreachable server stops after /version, naming the failure', async () => {
    const { client, seen } = fakeClient({
      version: () => {
        throw new ApiError({
          status: 0,
          reason: 'NetworkError',
          message: 'connect ECONNREFUSED',
          method: 'GET',
          path: '/version',
          code: 'EDGEOP_ERR_NETWORK',
        })
      },
    })
    const report = await preflight(client, requirements)
    assert.equal(report.ok, false)
    assert.equal(report.server.reachable, false)
    assert.equal(seen.length, 1)
    assert.match(
      formatPreflight(report),
      /^\[-\]cluster: GET \/version: NetworkError: connect ECONNREFUSED\n\[-\]authentication: not checked/,
    )
  })

  test('a credential that cannot be obtained is reported as an authentication failure', async () => {
    const { client } = fakeClient({
      version: () => {
        throw new EdgeopError(
          'EDGEOP_ERR_AUTH',
          'GET /version: getting credentials from exec plugin aws failed',
        )
      },
    })
    const report = await preflight(client, requirements)
    assert.equal(report.ok, false)
    assert.match(
      formatPreflight(report),
      /\n\[-\]authentication: GET \/version: getting credentials from exec plugin aws failed\n$/,
    )
  })

  test('401 means the credentials are rejected: no further checks', async () => {
    const { client, seen } = fakeClient({
      version: () => {
        throw apiError(401, 'Unauthorized', 'GET', '/version')
      },
      review: () => {
        throw apiError(401, 'Unauthorized', 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews')
      },
    })
    const report = await preflight(client, requirements)
    assert.deepEqual(
      [report.ok, report.server.reachable, report.identity.authenticated],
      [false, true, false],
    )
    assert.equal(seen.length, 2)
    assert.match(
      formatPreflight(report),
      /\[-\]authentication: POST \/apis\/authentication\.k8s\.io\/v1\/selfsubjectreviews: 401 Unauthorized/,
    )
  })

  test('without the SelfSubjectReview API the identity is unknown but the checks go on', async () => {
    const { client } = fakeClient({
      review: () => {
        throw apiError(404, 'NotFound', 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews')
      },
    })
    const report = await preflight(client, requirements)
    assert.equal(report.ok, true)
    assert.equal(report.identity.username, undefined)
    assert.match(formatPreflight(report), /\[\+\]authenticated; identity unknown \(POST .*404 NotFound/)
  })

  test('a failing review counts as not allowed, with the error as reason', async () => {
    const { client } = fakeClient({
      allowed: () => {
        throw apiError(500, 'InternalError', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews')
      },
    })
    const report = await preflight(client, {
      permissions: [{ group: '', resource: 'pods', verbs: ['list'] }],
    })
    assert.equal(report.ok, false)
    assert.match(report.permissions[0]!.reason!, /500 InternalError/)
  })
})
