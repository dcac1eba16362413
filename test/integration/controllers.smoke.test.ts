/**
 * Smoke test of the optional controllers (kube-controller-manager, kube-scheduler, kwok):
 * a Deployment really gets a ReplicaSet and Ready Pods on the fake node, a Job
 * completes, and garbage collection and namespace deletion work. Shared lease.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Agent, type Dispatcher, request } from 'undici'
import { eventually } from '../../src/testing/eventually.ts'
import { useTestEnv } from '../support/test-env.ts'

/** Controllers react within a second or two; generous for a loaded 2-core machine. */
const CONVERGE_TIMEOUT_MS = 60_000

// biome-ignore lint/suspicious/noExplicitAny: raw JSON of the API, asserted field by field
type Json = any

const { env, setup, defer } = useTestEnv()
let admin: Agent
let ns: string

async function api(
  method: Dispatcher.HttpMethod,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Json }> {
  const res = await request(`${env().server}${path}`, {
    method,
    dispatcher: admin,
    headers: {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.body.text()
  return { status: res.statusCode, json: text === '' ? undefined : JSON.parse(text) }
}

/** Waits until `check` holds, polling every 250 ms for up to {@link CONVERGE_TIMEOUT_MS}. */
const converged = (what: string, check: () => Promise<boolean>) =>
  eventually(check, { timeoutMs: CONVERGE_TIMEOUT_MS, what, intervalMs: 250 })

setup(async () => {
  admin = new Agent({ connect: { ca: env().caPem, cert: env().admin.certPem, key: env().admin.keyPem } })
  defer(() => admin.destroy())
  await env().startControllers()
  ns = await env().createNamespace('controllers')
})

const labels = { app: 'smoke' }
const podSpec = { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] }

test('a Deployment gets a ReplicaSet and Ready Pods on the fake node; deleting it collects them', async () => {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: podSpec },
    },
  }
  assert.equal((await api('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, deployment)).status, 201)
  await converged('2 ready replicas', async () => {
    const d = await api('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`)
    return d.json.status?.readyReplicas === 2
  })
  const rs = await api('GET', `/apis/apps/v1/namespaces/${ns}/replicasets`)
  assert.equal(rs.json.items.length, 1)
  const pods = await api('GET', `/api/v1/namespaces/${ns}/pods`)
  assert.equal(pods.json.items.length, 2)
  for (const pod of pods.json.items) {
    assert.equal(pod.spec.nodeName, 'kwok-node-0')
    assert.equal(pod.status.phase, 'Running')
    assert.ok(pod.status.podIP, 'has a pod IP')
  }

  assert.equal(
    (
      await api('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/web`, {
        propagationPolicy: 'Background',
      })
    ).status,
    200,
  )
  await converged('pods garbage-collected', async () => {
    const left = await api('GET', `/api/v1/namespaces/${ns}/pods`)
    return left.json.items.length === 0
  })
})

test('a Job completes', async () => {
  const job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'once' },
    spec: { template: { spec: { ...podSpec, restartPolicy: 'Never' } } },
  }
  assert.equal((await api('POST', `/apis/batch/v1/namespaces/${ns}/jobs`, job)).status, 201)
  await converged('Job succeeded', async () => {
    const j = await api('GET', `/apis/batch/v1/namespaces/${ns}/jobs/once`)
    return j.json.status?.succeeded === 1
  })
})

test('a namespace can be deleted', async () => {
  const doomed = await env().createNamespace('doomed')
  assert.equal(
    (await api('POST', `/api/v1/namespaces/${doomed}/configmaps`, { metadata: { name: 'x' } })).status,
    201,
  )
  assert.equal((await api('DELETE', `/api/v1/namespaces/${doomed}`)).status, 200)
  await converged(
    'namespace gone',
    async () => (await api('GET', `/api/v1/namespaces/${doomed}`)).status === 404,
  )
})
