/**
 * @module record-corpus — records the protobuf corpus of test/codec/protobuf/corpus/ from a real API server.
 *
 *     node test/codec/protobuf/record-corpus.ts
 *
 * Creates one namespace of objects of every kind the generated table covers (test/codec/protobuf/corpus-objects.ts),
 * then saves, per kind, the same list as the API server answers it in JSON and in protobuf, plus a watch stream
 * in both formats, a metadata-only list and get, and an error Status. The unit tests decode the protobuf files and compare
 * them with the JSON files; the integration test test/integration/protobuf-decoders.test.ts does the same live.
 * Uses the control plane of `npm run cluster:up` when its variables are set, else starts one.
 */

import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { join } from 'node:path'
import { getTestEnv, type TestEnv } from '../../controlplane/env.ts'
import { CORPUS_KINDS, corpusNamespace, corpusObjects } from './corpus-objects.ts'

const OUT = join(import.meta.dirname, 'corpus')
const PROTOBUF = 'application/vnd.kubernetes.protobuf'

interface Raw {
  status: number
  contentType: string
  body: Buffer
}

function raw(
  env: TestEnv,
  method: string,
  path: string,
  accept: string,
  body?: unknown,
  ms = 15_000,
): Promise<Raw> {
  const url = new URL(path, env.server)
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent: false,
        ca: env.caPem,
        cert: env.admin.certPem,
        key: env.admin.keyPem,
        headers: {
          accept,
          ...(body === undefined
            ? {}
            : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
        },
      },
      (res) => {
        const chunks: Buffer[] = []
        const timer = setTimeout(() => res.destroy(), ms)
        res.on('data', (c: Buffer) => chunks.push(c))
        const done = (): void => {
          clearTimeout(timer)
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks),
          })
        }
        res.on('end', done)
        res.on('close', done)
      },
    )
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

async function must(env: TestEnv, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await raw(env, method, path, 'application/json', body)
  if (res.status >= 300 && res.status !== 409)
    throw new Error(`${method} ${path}: HTTP ${res.status} ${res.body.toString().slice(0, 300)}`)
  return res.body.length ? JSON.parse(res.body.toString()) : undefined
}

const env = await getTestEnv()
const CORPUS_NAMESPACE = corpusNamespace()
// What an earlier run left: its node, and its namespace's corpus label (so the namespace list holds only this one;
// a namespace is only gone once kube-controller-manager has emptied it, which the test control plane may not run).
await raw(env, 'DELETE', '/api/v1/nodes/protobuf-corpus-node', 'application/json')
const old = (await must(env, 'GET', '/api/v1/namespaces?labelSelector=corpus%3Dprotobuf')) as {
  items: { metadata: { name: string } }[]
}
for (const n of old.items) {
  await must(env, 'PATCH', `/api/v1/namespaces/${n.metadata.name}`, {
    metadata: { labels: { corpus: null } },
  })
}
rmSync(OUT, { recursive: true, force: true })
mkdirSync(OUT, { recursive: true })
await must(env, 'POST', '/api/v1/namespaces', {
  metadata: { name: CORPUS_NAMESPACE, labels: { corpus: 'protobuf' } },
})
for (const { path, body } of corpusObjects(CORPUS_NAMESPACE)) await must(env, 'POST', path, body)
// Let controllers fill in status (ReplicaSets, EndpointSlices, Pods of the Deployment).
await new Promise((r) => setTimeout(r, 5000))

const save = (name: string, res: Raw): void => {
  if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${res.body.toString().slice(0, 300)}`)
  writeFileSync(join(OUT, name), res.body)
}
for (const k of CORPUS_KINDS) {
  const path = k.clusterScoped ? k.collection : k.collection.replace('{ns}', CORPUS_NAMESPACE)
  const query = k.clusterScoped && k.selector ? `?labelSelector=${encodeURIComponent(k.selector)}` : ''
  save(`${k.file}.list.json`, await raw(env, 'GET', path + query, 'application/json'))
  save(`${k.file}.list.pb`, await raw(env, 'GET', path + query, PROTOBUF))
}
// Metadata only, as client-go's metadata client asks for it.
const pods = `/api/v1/namespaces/${CORPUS_NAMESPACE}/pods`
save(
  'pods.metadata.list.pb',
  await raw(env, 'GET', pods, `${PROTOBUF};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`),
)
save(
  'pods.metadata.list.json',
  await raw(env, 'GET', pods, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1'),
)
save(
  'pods.metadata.get.pb',
  await raw(env, 'GET', `${pods}/solo`, `${PROTOBUF};as=PartialObjectMetadata;g=meta.k8s.io;v=v1`),
)
save(
  'pods.metadata.get.json',
  await raw(env, 'GET', `${pods}/solo`, 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1'),
)
// An error answer: a Status.
const missing = await raw(env, 'GET', `/api/v1/namespaces/${CORPUS_NAMESPACE}/configmaps/missing`, PROTOBUF)
writeFileSync(join(OUT, 'status.notfound.pb'), missing.body)
writeFileSync(
  join(OUT, 'status.notfound.json'),
  (await raw(env, 'GET', `/api/v1/namespaces/${CORPUS_NAMESPACE}/configmaps/missing`, 'application/json'))
    .body,
)
// A watch: the initial events as a streaming list (sendInitialEvents), a bookmark, then changes made while it runs.
const cms = `/api/v1/namespaces/${CORPUS_NAMESPACE}/configmaps`
const watchPath = `${cms}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=4`
const watches = [
  raw(env, 'GET', watchPath, `${PROTOBUF};stream=watch`, undefined, 6000),
  raw(env, 'GET', watchPath, 'application/json;stream=watch', undefined, 6000),
]
await new Promise((r) => setTimeout(r, 1000))
await must(env, 'POST', cms, { metadata: { name: 'watched', labels: { step: 'created' } }, data: { a: '1' } })
await must(env, 'PUT', `${cms}/watched`, {
  metadata: { name: 'watched', labels: { step: 'updated' } },
  data: { a: '2' },
})
await must(env, 'DELETE', `${cms}/watched`)
const [pbWatch, jsonWatch] = await Promise.all(watches)
writeFileSync(join(OUT, 'configmaps.watch.pb'), (pbWatch as Raw).body)
writeFileSync(join(OUT, 'configmaps.watch.json'), (jsonWatch as Raw).body)
await must(env, 'DELETE', `/api/v1/namespaces/${CORPUS_NAMESPACE}`)
await must(env, 'DELETE', '/api/v1/nodes/protobuf-corpus-node')
console.log(`recorded ${CORPUS_KINDS.length} kinds into ${OUT}`)
process.exit(0)
