/**
 * Protobuf on the wire against the real apiserver: every kind of the corpus listed in protobuf and in JSON
 * gives the same objects; informers over protobuf and over JSON hold the same store through adds, updates,
 * deletes, a streaming list and a relist; metadata-only informers, in protobuf PartialObjectMetadata for types
 * without their protobuf kind too; errors decoded from protobuf Status.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isDeepStrictEqual } from 'node:util'
import { InformerFactory } from '../../src/cache/factory.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { apiVersionOf, CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import { acceptHeader, isProtobufResponse } from '../../src/codec/content-negotiation.ts'
import type { KindSchema } from '../../src/codec/protobuf/kind-schema.ts'
import * as KINDS from '../../src/codec/protobuf/kinds.generated.ts'
import { responseFormat } from '../../src/codec/response-format.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES } from '../../src/operators/appservice/api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { CORPUS_KINDS, corpusObjects } from '../codec/protobuf/corpus-objects.ts'
import { createAppServices, installAppServiceCrd } from '../support/appservice.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, defer } = useTestEnv()

/** The client's transport, for a raw request whose Content-Type a test reads. */
const transportOf = (client: KubeClient) =>
  (client as unknown as { transport: { requestBytes(s: object): Promise<{ contentType: string }> } })
    .transport

function typeOf(collection: string, schema: KindSchema): ResourceType {
  const parts = collection.split('/').filter(Boolean)
  const resource = parts[parts.length - 1] as string
  const [group, version] = parts[0] === 'api' ? ['', 'v1'] : [parts[1] as string, parts[2] as string]
  return {
    group,
    version,
    resource,
    namespaced: collection.includes('{ns}'),
    kind: schema.kind,
    protobuf: schema,
  }
}

test('every corpus kind: the protobuf list deep-equals the JSON list of the same objects', async () => {
  const client = adminClient(env(), env().server)
  defer(() => client.close())
  const ns = await env().createNamespace('protobuf')
  for (const { path, body } of corpusObjects(ns)) {
    if (path === '/api/v1/nodes') continue // cluster-scoped: covered by the recorded corpus
    const k = CORPUS_KINDS.find((c) => c.collection.replace('{ns}', ns) === path)
    if (!k) throw new Error(`no corpus kind for ${path}`)
    const schema = (KINDS as unknown as Record<string, KindSchema>)[k.schema] as KindSchema
    await client.resource(typeOf(k.collection, schema), ns).create(body as KubeObject)
  }
  let compared = 0
  for (const k of CORPUS_KINDS.filter((c) => !c.clusterScoped)) {
    const schema = (KINDS as unknown as Record<string, KindSchema>)[k.schema] as KindSchema
    const rc = client.resource(typeOf(k.collection, schema), ns)
    // The same resourceVersion for both reads, so the lists are of the same state.
    const json = await rc.list({ format: 'json' })
    const pb = await rc.list({
      resourceVersion: json.metadata.resourceVersion,
      resourceVersionMatch: 'Exact',
    })
    const again = await rc.list({
      format: 'json',
      resourceVersion: json.metadata.resourceVersion,
      resourceVersionMatch: 'Exact',
    })
    assert.deepStrictEqual(pb.items, again.items, `${k.file}`)
    assert.equal(pb.kind, `${schema.kind}List`)
    compared += pb.items.length
  }
  assert.ok(compared >= 20, `compared ${compared} objects`)
})

test('the apiserver answers protobuf to our Accept header for built-ins, and JSON for a custom resource', async () => {
  const client = adminClient(env(), env().server)
  defer(() => client.close())
  const transport = transportOf(client)
  const pods = await transport.requestBytes({
    method: 'GET',
    path: '/api/v1/pods?limit=1',
    accept: acceptHeader(KINDS.POD_V1),
  })
  assert.ok(isProtobufResponse(pods.contentType), pods.contentType)
  const crds = await transport.requestBytes({
    method: 'GET',
    path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?limit=1',
    accept: acceptHeader(KINDS.POD_V1),
  })
  assert.ok(isProtobufResponse(crds.contentType), 'built-in CRDs themselves are served in protobuf too')
})

test('an error answered in protobuf is the same ApiError as in JSON', async () => {
  const client = adminClient(env(), env().server)
  defer(() => client.close())
  const pods = { ...CORE_TYPES.pods, protobuf: KINDS.POD_V1 }
  const err = await client
    .resource(pods, 'no-such-namespace-x')
    .list({ fieldSelector: 'no.such.field=1' })
    .then(
      () => undefined,
      (e: unknown) => e as { status: number; reason: string; message: string },
    )
  const jsonErr = await client
    .resource(pods, 'no-such-namespace-x')
    .list({ fieldSelector: 'no.such.field=1', format: 'json' })
    .then(
      () => undefined,
      (e: unknown) => e as { status: number; reason: string; message: string },
    )
  assert.ok(err && jsonErr)
  assert.equal(err.status, 400)
  assert.equal(err.reason, jsonErr.reason)
  assert.equal(err.message, jsonErr.message)
})

test('informers over protobuf and over JSON hold the same objects through adds, updates, deletes and a relist', async () => {
  const client = adminClient(env(), env().server)
  defer(() => client.close())
  const ns = await env().createNamespace('protobuf-informer')
  const cms = client.resource(CORE_TYPES.configMaps, ns)
  for (let i = 0; i < 30; i++)
    await cms.create({ metadata: { name: `cm-${i}`, labels: { i: String(i) } }, data: { v: 'x'.repeat(i) } })
  const pbType = { ...CORE_TYPES.configMaps, protobuf: KINDS.CONFIG_MAP_V1 }
  const factory = new InformerFactory(client)
  const pb = factory.informer({ type: pbType, namespace: ns })
  const json = factory.informer({ type: CORE_TYPES.configMaps, namespace: ns, labelSelector: '!absent' })
  const meta = factory.informer({ type: pbType, namespace: ns, metadataOnly: true })
  const seen: string[] = []
  pb.addEventHandler({
    onAdd: (o) => seen.push(`add ${o.metadata.name}`),
    onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
  })
  const ac = new AbortController()
  defer(() => ac.abort())
  factory.start(ac.signal)
  await factory.waitForSync(30_000)
  for (let i = 0; i < 10; i++) await cms.patch(`cm-${i}`, { data: { v: 'changed' } })
  for (let i = 20; i < 30; i++) await cms.delete(`cm-${i}`)
  await cms.create({
    metadata: { name: 'late' },
    binaryData: { b: Buffer.from([1, 2, 3]).toString('base64') },
  })
  const final = await cms.list({ format: 'json' })
  const byName = (list: KubeObject[]) => Object.fromEntries(list.map((o) => [o.metadata.name, o]))
  const strip = (o: KubeObject) => ({ ...o, apiVersion: undefined, kind: undefined })
  const want = byName(
    final.items.map((o) => strip({ ...o, metadata: { ...o.metadata, managedFields: undefined } })),
  )
  const clean = (list: KubeObject[]) =>
    byName(
      list.map((o) =>
        JSON.parse(JSON.stringify(strip({ ...o, metadata: { ...o.metadata, managedFields: undefined } }))),
      ),
    )
  const same = (list: KubeObject[]) => isDeepStrictEqual(clean(list), JSON.parse(JSON.stringify(want)))
  await eventually(() => same(pb.store.list()) && same(json.store.list()) && meta.store.size === 21, {
    timeoutMs: 30_000,
    what: 'stores caught up',
  }).catch((e: Error) => {
    assert.deepStrictEqual(clean(pb.store.list()), JSON.parse(JSON.stringify(want)), e.message)
    assert.deepStrictEqual(clean(json.store.list()), JSON.parse(JSON.stringify(want)), e.message)
    throw e
  })
  assert.deepStrictEqual(clean(pb.store.list()), clean(json.store.list()))
  assert.deepStrictEqual(clean(pb.store.list()), JSON.parse(JSON.stringify(want)))
  assert.ok(
    pb.store.list().every((o) => o.metadata.managedFields === undefined),
    'managedFields dropped at decode',
  )
  assert.ok(seen.includes('add late') && seen.includes('delete cm-25'), seen.slice(-5).join(', '))
  const m = meta.store.get(`${ns}/late`)
  assert.equal(m?.kind, 'PartialObjectMetadata')
  assert.equal(m?.apiVersion, apiVersionOf({ group: 'meta.k8s.io', version: 'v1' }))
  ac.abort()
  await factory.stopped()
})

test('metadata-only informers of a type without its protobuf kind read protobuf PartialObjectMetadata and hold what JSON ones hold', async () => {
  const client = adminClient(env(), env().server)
  defer(() => client.close())
  const ns = await env().createNamespace('protobuf-metadata')
  const cms = client.resource(CORE_TYPES.configMaps, ns)
  for (let i = 0; i < 20; i++)
    await cms.create({ metadata: { name: `cm-${i}`, labels: { i: String(i) } }, data: { v: 'x' } })
  // What CORE_TYPES (no protobuf kind) asks for, answered in protobuf by the real apiserver.
  const transport = transportOf(client)
  const asked = await transport.requestBytes({
    method: 'GET',
    path: `/api/v1/namespaces/${ns}/configmaps?limit=1`,
    accept: responseFormat(CORE_TYPES.configMaps, {}, 'PartialObjectMetadataList').accept,
  })
  assert.ok(isProtobufResponse(asked.contentType), asked.contentType)

  const factory = new InformerFactory(client)
  const pb = factory.informer({ type: CORE_TYPES.configMaps, namespace: ns, metadataOnly: true })
  const json = factory.informer({
    type: CORE_TYPES.configMaps,
    namespace: ns,
    metadataOnly: true,
    format: 'json',
    labelSelector: '!absent', // another informer than pb's (the factory keys informers by selectors)
  })
  const ac = new AbortController()
  defer(() => ac.abort())
  factory.start(ac.signal)
  await factory.waitForSync(30_000)
  for (let i = 0; i < 5; i++) await cms.patch(`cm-${i}`, { metadata: { labels: { changed: 'yes' } } })
  for (let i = 15; i < 20; i++) await cms.delete(`cm-${i}`)
  await cms.create({ metadata: { name: 'late', annotations: { a: 'b' } } })
  const final = await cms.listMetadata({ format: 'json' })
  const byName = (list: readonly KubeObject[]) =>
    Object.fromEntries(
      list.map((o) => [
        o.metadata.name,
        JSON.parse(JSON.stringify({ ...o, metadata: { ...o.metadata, managedFields: undefined } })),
      ]),
    )
  const want = byName(final.items)
  await eventually(
    () =>
      isDeepStrictEqual(byName(pb.store.list()), want) && isDeepStrictEqual(byName(json.store.list()), want),
    { timeoutMs: 30_000, what: 'the protobuf and JSON metadata-only stores caught up' },
  ).catch((e: Error) => {
    assert.deepStrictEqual(byName(pb.store.list()), want, e.message)
    throw e
  })
  assert.equal(Object.keys(want).length, 16)
  assert.equal(pb.store.get(`${ns}/cm-0`)?.metadata.labels?.changed, 'yes')
  assert.equal(pb.store.get(`${ns}/late`)?.kind, 'PartialObjectMetadata')
  ac.abort()
  await factory.stopped()
})

test('a metadata-only list of a custom resource is answered in protobuf PartialObjectMetadata, equal to the JSON one', async () => {
  const client = adminClient(env(), env().server)
  defer(() => client.close())
  await installAppServiceCrd(client)
  const ns = await env().createNamespace('protobuf-metadata-cr')
  const apps = client.resource(APPSERVICES, ns)
  await createAppServices(apps, 3)
  const transport = transportOf(client)
  const asked = await transport.requestBytes({
    method: 'GET',
    path: `/apis/${APPSERVICES.group}/${APPSERVICES.version}/namespaces/${ns}/${APPSERVICES.resource}?limit=1`,
    accept: responseFormat(APPSERVICES, {}, 'PartialObjectMetadataList').accept,
  })
  // The apiserver converts a custom resource to PartialObjectMetadata, which it can encode in protobuf.
  assert.ok(isProtobufResponse(asked.contentType), asked.contentType)
  const json = await apps.listMetadata({ format: 'json' })
  const pb = await apps.listMetadata({
    resourceVersion: json.metadata.resourceVersion,
    resourceVersionMatch: 'Exact',
  })
  assert.equal(pb.items.length, 3)
  assert.deepStrictEqual(pb.items, json.items)
})

test('a metadata-only get is answered in protobuf PartialObjectMetadata for a built-in and a custom resource, equal to the JSON one', async () => {
  const client = adminClient(env(), env().server)
  defer(() => client.close())
  await installAppServiceCrd(client)
  const ns = await env().createNamespace('protobuf-metadata-get')
  const cms = client.resource(CORE_TYPES.configMaps, ns)
  await cms.create({ metadata: { name: 'one', labels: { a: 'b' } }, data: { big: 'x'.repeat(1000) } })
  const apps = client.resource(APPSERVICES, ns)
  await createAppServices(apps, 1)
  const name = (await apps.listMetadata()).items[0]!.metadata.name!
  // What each get's answer came as: the transport's byte reads, seen from the client's own transport.
  const transport = transportOf(client)
  const read = transport.requestBytes.bind(transport)
  const answered: string[] = []
  transport.requestBytes = async (spec: object) => {
    const r = await read(spec)
    answered.push(r.contentType)
    return r
  }
  defer(() => {
    transport.requestBytes = read
  })
  for (const rc of [cms, apps]) {
    const target = rc === cms ? 'one' : name
    answered.length = 0
    const pb = await rc.getMetadata(target)
    assert.equal(answered.length, 1, `${rc.type.resource}: one get, read as bytes`)
    assert.ok(isProtobufResponse(answered[0]), `${rc.type.resource}: ${answered[0]}`)
    const json = await rc.getMetadata(target, { format: 'json' })
    assert.equal(answered.length, 1, `${rc.type.resource}: format 'json' reads JSON`)
    assert.equal(pb.kind, 'PartialObjectMetadata')
    assert.equal((pb as Record<string, unknown>).data, undefined)
    assert.equal((pb as Record<string, unknown>).spec, undefined)
    assert.deepStrictEqual(pb, json, rc.type.resource)
  }
})
