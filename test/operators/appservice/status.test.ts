/** AppService status derivation: fields and conditions from the observed Deployment. Pure. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Deployment, DeploymentStatus } from '../../../src/api/index.ts'
import type { AppService } from '../../../src/operators/appservice/api.ts'
import {
  degraded,
  invalidSpecConditions,
  NOT_DEGRADED,
  observedStatus,
  rolloutConditions,
} from '../../../src/operators/appservice/status.ts'

const deployment = (generation: number, status: DeploymentStatus): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'shop', namespace: 'team-a', generation },
  spec: { selector: {}, template: {} },
  status,
})
/** A finished rollout of `n` replicas, observed at generation 2. */
const complete = (n: number): DeploymentStatus => ({
  observedGeneration: 2,
  replicas: n,
  updatedReplicas: n,
  readyReplicas: n,
  availableReplicas: n,
})
const summary = (conditions: { type: string; status: string; reason: string; message: string }[]) =>
  conditions.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`)

test('a complete rollout: Ready=True, Progressing=False, both DeploymentAvailable', () => {
  assert.deepEqual(summary(rolloutConditions(deployment(2, complete(3)), 3)), [
    'Ready=True DeploymentAvailable: 3/3 replicas ready',
    'Progressing=False DeploymentAvailable: 3/3 replicas ready',
  ])
  assert.deepEqual(summary(rolloutConditions(deployment(2, complete(0)), 0)), [
    'Ready=True DeploymentAvailable: 0/0 replicas ready',
    'Progressing=False DeploymentAvailable: 0/0 replicas ready',
  ])
})

test('not done while any rule of `kubectl rollout status` fails, however many replicas are ready', () => {
  const progressing = ['Ready=False DeploymentProgressing', 'Progressing=True DeploymentProgressing']
  const cases: [string, Deployment][] = [
    ['a generation the Deployment controller has not seen', deployment(3, complete(3))],
    ['replicas still on the old template', deployment(2, { ...complete(3), updatedReplicas: 2 })],
    ['old replicas left over (surge)', deployment(2, { ...complete(3), replicas: 4, readyReplicas: 4 })],
    ['updated replicas not yet available', deployment(2, { ...complete(3), availableReplicas: 2 })],
    ['too few ready', deployment(2, { ...complete(3), readyReplicas: 2 })],
    ['no status at all', deployment(1, {})],
  ]
  for (const [why, dep] of cases)
    assert.deepEqual(
      summary(rolloutConditions(dep, 3)).map((s) => s.slice(0, s.indexOf(':'))),
      progressing,
      why,
    )
  assert.deepEqual(summary(rolloutConditions(deployment(2, { ...complete(3), readyReplicas: 2 }), 3)), [
    'Ready=False DeploymentProgressing: 2/3 replicas ready',
    'Progressing=True DeploymentProgressing: 2/3 replicas ready',
  ])
})

test('a stalled rollout (the Deployment’s Progressing=False) is DeploymentUnavailable, with its message', () => {
  const stalled = (message?: string) =>
    deployment(2, {
      ...complete(3),
      readyReplicas: 1,
      conditions: [
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          ...(message ? { message } : {}),
        },
      ],
    })
  assert.deepEqual(summary(rolloutConditions(stalled('ReplicaSet "shop-1" has timed out progressing.'), 3)), [
    'Ready=False DeploymentUnavailable: 1/3 replicas ready: ReplicaSet "shop-1" has timed out progressing.',
    'Progressing=False DeploymentUnavailable: 1/3 replicas ready',
  ])
  assert.equal(rolloutConditions(stalled(), 3)[0]!.message, '1/3 replicas ready: rollout stalled')
})

test('an invalid spec: Ready=False and Degraded=True, both InvalidConfiguration with the problem', () => {
  assert.deepEqual(summary(invalidSpecConditions('spec.image "X" is not a valid image reference')), [
    'Ready=False InvalidConfiguration: spec.image "X" is not a valid image reference',
    'Degraded=True InvalidConfiguration: spec.image "X" is not a valid image reference',
  ])
  assert.deepEqual(summary([degraded('ExternalAPIUnavailable', 'database API: HTTP 503'), NOT_DEGRADED]), [
    'Degraded=True ExternalAPIUnavailable: database API: HTTP 503',
    'Degraded=False AsExpected: ',
  ])
})

test('the status fields: this generation, ready replicas from the Deployment, selector, endpoint; the rest kept', () => {
  const app: AppService = {
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'AppService',
    metadata: { name: 'shop', namespace: 'team-a', generation: 4 },
    spec: { image: 'nginx', replicas: 3, port: 8080 },
    status: { observedGeneration: 3, readyReplicas: 1, conditions: [] },
  }
  assert.deepEqual(observedStatus(app, app.spec, deployment(2, complete(3))), {
    observedGeneration: 4,
    readyReplicas: 3,
    selector: 'platform.example.com/appservice=shop',
    endpoint: 'http://shop.team-a.svc:8080',
    conditions: [],
  })
  assert.equal(observedStatus(app, app.spec, deployment(1, {})).readyReplicas, 0)
})
