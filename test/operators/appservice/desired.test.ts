/** The desired children of an AppService: pure builders, no API server needed. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { AppService, AppServiceSpec } from '../../../src/operators/appservice/api.ts'
import {
  APP_LABEL,
  CHILD_SELECTOR,
  databaseKey,
  desiredDeployment,
  desiredService,
  endpointOf,
  selectorOf,
} from '../../../src/operators/appservice/desired.ts'

const app: AppService = {
  apiVersion: 'platform.example.com/v1alpha1',
  kind: 'AppService',
  metadata: { name: 'shop', namespace: 'team-a', uid: 'u-1', generation: 3 },
  spec: { image: 'nginx:1.27', replicas: 2, port: 8080 },
}
const spec: AppServiceSpec = { image: 'registry.local:5000/shop/web:2', replicas: 3, port: 9000 }

const controllerRef = {
  apiVersion: 'platform.example.com/v1alpha1',
  kind: 'AppService',
  name: 'shop',
  uid: 'u-1',
  controller: true,
  blockOwnerDeletion: true,
}
const labels = {
  'app.kubernetes.io/name': 'shop',
  'app.kubernetes.io/managed-by': 'edgeop',
  [APP_LABEL]: 'shop',
}

test('the Deployment: same name and namespace, controlled by the AppService, replicas, image and port from the spec', () => {
  assert.deepEqual(desiredDeployment(app, spec), {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'shop', namespace: 'team-a', labels, ownerReferences: [controllerRef] },
    spec: {
      replicas: 3,
      selector: { matchLabels: { [APP_LABEL]: 'shop' } },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'registry.local:5000/shop/web:2',
              ports: [{ name: 'http', containerPort: 9000 }],
            },
          ],
        },
      },
    },
  })
})

test('the Service selects the Deployment’s pods on the spec’s port', () => {
  const svc = desiredService(app, spec)
  assert.deepEqual(svc, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'shop', namespace: 'team-a', labels, ownerReferences: [controllerRef] },
    spec: {
      selector: { [APP_LABEL]: 'shop' },
      ports: [{ name: 'http', port: 9000, targetPort: 9000 }],
    },
  })
  const podLabels = desiredDeployment(app, spec).spec.template.metadata?.labels
  assert.deepEqual({ ...podLabels, ...svc.spec?.selector }, podLabels)
})

test('every child carries the label the child informers select on', () => {
  const [key, value] = CHILD_SELECTOR.split('=')
  for (const child of [desiredDeployment(app, spec), desiredService(app, spec)])
    assert.equal(child.metadata.labels?.[key!], value, child.kind)
})

test('status selector and endpoint; the database key comes from the UID, not the name', () => {
  assert.equal(selectorOf(app), `${APP_LABEL}=shop`)
  assert.equal(endpointOf(app, spec), 'http://shop.team-a.svc:9000')
  assert.equal(databaseKey(app), 'appsrv-u-1')
  const recreated = { ...app, metadata: { ...app.metadata, uid: 'u-2' } }
  assert.notEqual(databaseKey(recreated), databaseKey(app))
  // A member cluster's key names it: the same UID (a cluster restored from another's backup) does not collide.
  assert.equal(databaseKey(app, 'east'), 'appsrv-east-u-1')
  assert.notEqual(databaseKey(app, 'east'), databaseKey(app, 'west'))
})
