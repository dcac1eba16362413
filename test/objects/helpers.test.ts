import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ResourceClient } from '../../src/client/resource-client.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { isSubset } from '../../src/objects/apply.ts'
import {
  findCondition,
  jsonEqual,
  setCondition,
  updateStatusIfChanged,
} from '../../src/objects/conditions.ts'
import { microTime } from '../../src/objects/events.ts'
import { controllerReference, withControllerReference } from '../../src/objects/owner.ts'

const owner: KubeObject = {
  apiVersion: 'platform.example.com/v1alpha1',
  kind: 'AppService',
  metadata: { name: 'web', namespace: 'a', uid: 'u-1' },
}

test('controller reference: controller and blockOwnerDeletion set; same-namespace rule; one controller only', () => {
  assert.deepEqual(controllerReference(owner), {
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'AppService',
    name: 'web',
    uid: 'u-1',
    controller: true,
    blockOwnerDeletion: true,
  })
  const child = withControllerReference<KubeObject>(owner, {
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'a' },
  })
  assert.equal(child.metadata.ownerReferences?.length, 1)
  assert.deepEqual(
    withControllerReference(owner, child).metadata.ownerReferences,
    child.metadata.ownerReferences,
    'idempotent',
  )
  assert.throws(
    () => withControllerReference(owner, { kind: 'Service', metadata: { name: 'web', namespace: 'b' } }),
    /cannot be owned by AppService a\/web: owners must be in the same namespace/,
  )
  assert.throws(
    () => withControllerReference(owner, { kind: 'ClusterRole', metadata: { name: 'r' } }),
    /ClusterRole r is cluster-scoped and cannot be owned by namespaced AppService a\/web/,
  )
  const taken = {
    kind: 'Deployment',
    metadata: {
      name: 'x',
      namespace: 'a',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Other', name: 'o', uid: 'u-2', controller: true }],
    },
  }
  assert.throws(() => withControllerReference(owner, taken), /already controlled by Other o/)
  const clusterOwner = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', uid: 'u-3' } }
  assert.ok(
    withControllerReference(clusterOwner, { kind: 'Pod', metadata: { name: 'p', namespace: 'a' } }),
    'a cluster-scoped owner may own a namespaced child',
  )
  assert.throws(() => controllerReference({ metadata: { name: 'x' } }), /needs apiVersion, kind/)
})

test('isSubset: desired fields must match; server defaults and foreign fields are ignored; arrays compare element-wise', () => {
  const live = {
    spec: {
      replicas: 2,
      template: {
        spec: {
          containers: [
            {
              name: 'c',
              image: 'nginx:1',
              imagePullPolicy: 'IfNotPresent',
              ports: [{ containerPort: 80, protocol: 'TCP' }],
            },
          ],
        },
      },
    },
    metadata: { labels: { a: '1', other: 'x' } },
  }
  assert.ok(
    isSubset(
      {
        spec: {
          replicas: 2,
          template: {
            spec: { containers: [{ name: 'c', image: 'nginx:1', ports: [{ containerPort: 80 }] }] },
          },
        },
      },
      live,
    ),
  )
  assert.ok(isSubset({ metadata: { labels: { a: '1' } } }, live))
  assert.ok(!isSubset({ spec: { replicas: 3 } }, live), 'drift in a scalar')
  assert.ok(
    !isSubset({ spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } }, live),
  )
  assert.ok(
    !isSubset({ spec: { template: { spec: { containers: [{ name: 'c' }, { name: 'd' }] } } } }, live),
    'a missing element',
  )
  assert.ok(!isSubset({ metadata: { labels: { b: '2' } } }, live), 'a missing label')
  assert.ok(!isSubset({ x: [] }, { x: {} }))
})

test('setCondition moves lastTransitionTime only when the status changes', () => {
  const t1 = new Date('2026-11-29T10:00:00.456Z')
  const t2 = new Date('2026-11-29T11:00:00Z')
  let c = setCondition(
    undefined,
    {
      type: 'Ready',
      status: 'False',
      reason: 'DeploymentProgressing',
      message: '0/2',
      observedGeneration: 1,
    },
    t1,
  )
  assert.equal(c[0]?.lastTransitionTime, '2026-11-29T10:00:00Z')
  c = setCondition(
    c,
    {
      type: 'Ready',
      status: 'False',
      reason: 'DeploymentProgressing',
      message: '1/2',
      observedGeneration: 2,
    },
    t2,
  )
  assert.equal(c[0]?.lastTransitionTime, '2026-11-29T10:00:00Z', 'same status: time kept')
  assert.equal(c[0]?.message, '1/2')
  c = setCondition(
    c,
    { type: 'Ready', status: 'True', reason: 'DeploymentAvailable', message: '2/2', observedGeneration: 2 },
    t2,
  )
  assert.equal(findCondition(c, 'Ready')?.lastTransitionTime, '2026-11-29T11:00:00Z')
  c = setCondition(c, { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' }, t2)
  assert.deepEqual(
    c.map((x) => x.type),
    ['Ready', 'Degraded'],
  )
})

test('jsonEqual ignores key order and undefined fields; microTime has microseconds', () => {
  assert.ok(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1, d: undefined }))
  assert.ok(!jsonEqual({ a: [1, 2] }, { a: [2, 1] }))
  assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: null }))
  assert.equal(microTime(Date.parse('2026-11-29T10:00:00.123Z')), '2026-11-29T10:00:00.123000Z')
})

test('D17: isSubset and jsonEqual see only own keys: `__proto__`, `constructor` and `toString` are ordinary keys', () => {
  const proto = JSON.parse('{"spec":{"__proto__":{}}}')
  assert.ok(!isSubset(proto, { spec: {} }), 'a desired `__proto__` the live object lacks is drift')
  assert.ok(isSubset(proto, JSON.parse('{"spec":{"__proto__":{},"x":1}}')))
  assert.ok(!jsonEqual(JSON.parse('{"__proto__":{}}'), { x: {} }))
  assert.ok(!jsonEqual({ constructor: {} }, { x: {} }))
  assert.ok(jsonEqual(JSON.parse('{"__proto__":{"a":1}}'), JSON.parse('{"__proto__":{"a":1}}')))
})

test('D17: updateStatusIfChanged nulls a status key named `constructor` or `toString` that went away', async () => {
  const patches: unknown[] = []
  const client = {
    patch: async (_name: string, body: unknown) => {
      patches.push(body)
      return owner
    },
  } as unknown as ResourceClient<KubeObject>
  const status = JSON.parse('{"constructor":"a","toString":"b","__proto__":"c","ready":true}')
  await updateStatusIfChanged(client, { ...owner, status }, { ready: false })
  assert.deepEqual(
    JSON.stringify(patches),
    '[{"status":{"ready":false,"constructor":null,"toString":null,"__proto__":null}}]',
  )
})
