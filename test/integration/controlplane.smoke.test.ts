/**
 * Smoke test of the test control plane itself, with raw undici only (the project's
 * client is tested elsewhere). Exclusive: it compacts etcd and restarts processes.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { Agent, type Dispatcher, request } from 'undici'
import { useTestEnv } from '../support/test-env.ts'

// biome-ignore lint/suspicious/noExplicitAny: raw JSON of the API, asserted field by field
type Json = any

const { env, setup, defer } = useTestEnv({ exclusive: true })
let admin: Agent
let ns: string
const agents: Agent[] = []
defer(() => Promise.all(agents.map((a) => a.destroy())))

interface Reply {
  status: number
  headers: Record<string, string | string[] | undefined>
  json: Json
}

function agentFor(certPem: string, keyPem: string, allowH2 = false): Agent {
  const a = new Agent({ allowH2, connect: { ca: env().caPem, cert: certPem, key: keyPem } })
  agents.push(a)
  return a
}

async function api(
  method: Dispatcher.HttpMethod,
  url: string,
  body?: unknown,
  dispatcher: Agent = admin,
): Promise<Reply> {
  const res = await request(url, {
    method,
    dispatcher,
    headers: {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.body.text()
  return { status: res.statusCode, headers: res.headers, json: text === '' ? undefined : JSON.parse(text) }
}

/** Parses a watch response into events, one per JSON line. */
async function* events(body: AsyncIterable<Buffer>): AsyncGenerator<{ type: string; object: Json }> {
  let buffered = ''
  for await (const chunk of body) {
    buffered += chunk.toString('utf8')
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      if (line.trim() !== '') yield JSON.parse(line)
    }
  }
}

function configMap(name: string, data: Record<string, string> = {}) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { smoke: 'yes' } }, data }
}

setup(async () => {
  admin = agentFor(env().admin.certPem, env().admin.keyPem)
  ns = await env().createNamespace('smoke')
})

test('ConfigMap: create, get, list, watch', async () => {
  const base = `${env().server}/api/v1/namespaces/${ns}/configmaps`
  const created = await api('POST', base, configMap('one', { a: '1' }))
  assert.equal(created.status, 201)
  const got = await api('GET', `${base}/one`)
  assert.equal(got.status, 200)
  assert.deepEqual(got.json.data, { a: '1' })
  const list = await api('GET', `${base}?labelSelector=smoke%3Dyes`)
  assert.equal(list.status, 200)
  assert.deepEqual(
    list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name),
    ['one'],
  )

  const watch = await request(`${base}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`, {
    dispatcher: admin,
  })
  assert.equal(watch.statusCode, 200)
  const stream = events(watch.body)
  assert.equal((await api('PUT', `${base}/one`, { ...got.json, data: { a: '2' } })).status, 200)
  const { value } = await stream.next()
  assert.equal(value?.type, 'MODIFIED')
  assert.deepEqual(value?.object.data, { a: '2' })
  watch.body.destroy()
})

test('CRD: create, wait Established, create a custom resource', async () => {
  const group = `smoke${randomBytes(3).toString('hex')}.edgeop.dev`
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
            },
          },
          subresources: { status: {} },
        },
      ],
    },
  }
  const crdUrl = `${env().server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`
  assert.equal((await api('POST', crdUrl, crd)).status, 201)
  for (let i = 0; ; i++) {
    const got = await api('GET', `${crdUrl}/widgets.${group}`)
    const established = got.json.status?.conditions?.some(
      (c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True',
    )
    if (established) break
    assert.ok(i < 100, 'CRD Established within 10 s')
    await delay(100)
  }
  const widget = { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 3 } }
  const url = `${env().server}/apis/${group}/v1/namespaces/${ns}/widgets`
  let created: Reply | undefined
  // The new resource's handler can lag the Established condition by a moment.
  for (let i = 0; i < 50; i++) {
    created = await api('POST', url, widget)
    if (created.status !== 404) break
    await delay(100)
  }
  assert.equal(created?.status, 201)
  assert.equal((await api('GET', `${url}/w1`)).json.spec.size, 3)
})

test('after compact(), the uncached apiserver answers an old resourceVersion with 410', async () => {
  const { server } = await env().uncached()
  const base = `${server}/api/v1/namespaces/${ns}/configmaps`
  const created = await api('POST', base, configMap('old'))
  assert.equal(created.status, 201)
  const oldRv = created.json.metadata.resourceVersion as string
  for (let i = 0; i < 3; i++) {
    const cur = await api('GET', `${base}/old`)
    assert.equal((await api('PUT', `${base}/old`, { ...cur.json, data: { i: String(i) } })).status, 200)
  }
  const revision = await env().compact()
  assert.ok(revision > Number(oldRv))

  const watch = await request(`${base}?watch=1&resourceVersion=${oldRv}`, { dispatcher: admin })
  if (watch.statusCode === 410) {
    await watch.body.dump()
  } else {
    assert.equal(watch.statusCode, 200)
    const { value } = await events(watch.body).next()
    assert.equal(value?.type, 'ERROR')
    assert.equal(value?.object.code, 410)
    assert.equal(value?.object.reason, 'Expired')
    watch.body.destroy()
  }
  const list = await api('GET', `${base}?resourceVersion=${oldRv}&resourceVersionMatch=Exact`)
  assert.equal(list.status, 410)
  assert.equal(list.json.reason, 'Expired')
})

test('the fault proxy returns an injected 429 with Retry-After, then forwards as the caller', async () => {
  const proxy = await env().startFaultProxy()
  try {
    for (const h2 of [false, true]) {
      const client = agentFor(env().admin.certPem, env().admin.keyPem, h2)
      const url = `${proxy.url}/api/v1/namespaces/${ns}/configmaps`
      proxy.addFault({
        method: 'GET',
        path: /\/configmaps$/,
        times: 1,
        action: { type: 'status', status: 429, retryAfterSeconds: 3 },
      })
      const limited = await api('GET', url, undefined, client)
      assert.equal(limited.status, 429)
      assert.equal(limited.headers['retry-after'], '3')
      assert.equal(limited.json.reason, 'TooManyRequests')
      assert.equal(limited.json.details.retryAfterSeconds, 3)
      const ok = await api('GET', url, undefined, client)
      assert.equal(ok.status, 200, JSON.stringify(ok.json))
      assert.equal(ok.json.kind, 'ConfigMapList')
    }
    assert.deepEqual(
      proxy.requests().map((r) => [r.httpVersion, r.status, r.user]),
      [
        ['1.1', 429, 'edgeop-admin'],
        ['1.1', 200, 'edgeop-admin'],
        ['2', 429, 'edgeop-admin'],
        ['2', 200, 'edgeop-admin'],
      ],
    )
  } finally {
    await proxy.close()
  }
})

test('a user without RBAC gets 403 on a list (directly and through the proxy), and 200 once granted', async () => {
  const user = await env().userKubeconfig('smoke-user')
  const client = agentFor(user.certPem, user.keyPem)
  const url = `${env().server}/api/v1/namespaces/${ns}/configmaps`
  const denied = await api('GET', url, undefined, client)
  assert.equal(denied.status, 403)
  assert.equal(denied.json.reason, 'Forbidden')
  assert.match(denied.json.message, /User "smoke-user" cannot list resource "configmaps"/)

  const proxy = await env().startFaultProxy()
  try {
    const viaProxy = await api('GET', `${proxy.url}/api/v1/namespaces/${ns}/configmaps`, undefined, client)
    assert.equal(viaProxy.status, 403)
    assert.match(viaProxy.json.message, /User "smoke-user"/)
  } finally {
    await proxy.close()
  }

  const rbac = `${env().server}/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`
  await api('POST', `${rbac}/roles`, {
    metadata: { name: 'cm-reader' },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
  })
  await api('POST', `${rbac}/rolebindings`, {
    metadata: { name: 'cm-reader' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'smoke-user' }],
  })
  let allowed: Reply | undefined
  for (let i = 0; i < 50; i++) {
    allowed = await api('GET', url, undefined, client)
    if (allowed.status === 200) break
    await delay(100) // the RBAC authorizer's informer catches up
  }
  assert.equal(allowed?.status, 200)
})

test('restartApiserver and stopEtcd/startEtcd keep the data', async () => {
  const base = `${env().server}/api/v1/namespaces/${ns}/configmaps`
  assert.equal((await api('POST', base, configMap('survivor'))).status, 201)
  await env().restartApiserver('cached')
  assert.equal((await api('GET', `${base}/survivor`)).status, 200)
  await env().stopEtcd()
  const down = await request(`${base}/survivor`, {
    dispatcher: admin,
    signal: AbortSignal.timeout(3_000),
  }).then(
    async (res) => {
      await res.body.dump()
      return res.statusCode
    },
    () => 599, // no answer within the timeout
  )
  assert.ok(down >= 500, `requests fail while etcd is down (got ${down})`)
  await env().startEtcd()
  assert.equal((await api('GET', `${base}/survivor`)).status, 200)
})
