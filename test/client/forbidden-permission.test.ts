import assert from 'node:assert/strict'
import { test } from 'node:test'
import { forbiddenPermission, formatRbacPermission } from '../../src/client/forbidden-permission.ts'
import { ApiError } from '../../src/transport/api-error.ts'

const refused = (method: string, path: string, status = 403, reason = 'Forbidden') =>
  new ApiError({ status, reason, message: 'forbidden', method, path })

test('a 403 names the verb, group, resource (with subresource) and namespace of the refused request', () => {
  const cases: [string, string, unknown][] = [
    [
      'PATCH',
      '/apis/apps/v1/namespaces/shop/deployments/web',
      { verb: 'patch', group: 'apps', resource: 'deployments', namespace: 'shop' },
    ],
    [
      'GET',
      '/api/v1/namespaces/shop/services',
      { verb: 'list', group: '', resource: 'services', namespace: 'shop' },
    ],
    [
      'GET',
      '/api/v1/namespaces/shop/services/web',
      { verb: 'get', group: '', resource: 'services', namespace: 'shop' },
    ],
    [
      'PATCH',
      '/apis/platform.example.com/v1/namespaces/shop/appservices/web/status',
      { verb: 'patch', group: 'platform.example.com', resource: 'appservices/status', namespace: 'shop' },
    ],
    [
      'POST',
      '/api/v1/namespaces',
      { verb: 'create', group: '', resource: 'namespaces', namespace: undefined },
    ],
    [
      'DELETE',
      '/api/v1/namespaces/shop',
      { verb: 'delete', group: '', resource: 'namespaces', namespace: undefined },
    ],
    [
      'DELETE',
      '/apis/apps/v1/namespaces/shop/deployments',
      { verb: 'deletecollection', group: 'apps', resource: 'deployments', namespace: 'shop' },
    ],
    [
      'PUT',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/x',
      { verb: 'update', group: 'rbac.authorization.k8s.io', resource: 'clusterroles', namespace: undefined },
    ],
  ]
  for (const [method, path, want] of cases)
    assert.deepEqual(forbiddenPermission(refused(method, path)), want, `${method} ${path}`)
})

test('anything but a 403 on a resource path gives nothing', () => {
  assert.equal(forbiddenPermission(refused('GET', '/api/v1/pods', 404, 'NotFound')), undefined)
  assert.equal(forbiddenPermission(refused('GET', '/version')), undefined)
  assert.equal(forbiddenPermission(new Error('x')), undefined)
})

test("the rule prints on one line in the check command's format", () => {
  assert.equal(
    formatRbacPermission({ verb: 'patch', group: 'apps', resource: 'deployments', namespace: 'shop' }),
    'Role in namespace "shop": - apiGroups: ["apps"] resources: ["deployments"] verbs: ["patch"]',
  )
  assert.equal(
    formatRbacPermission({ verb: 'create', group: '', resource: 'namespaces', namespace: undefined }),
    'ClusterRole: - apiGroups: [""] resources: ["namespaces"] verbs: ["create"]',
  )
})
