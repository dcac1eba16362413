/**
 * A metadata-only get asks for what client-go's metadata client asks for (protobuf PartialObjectMetadata first,
 * JSON second), as the metadata-only list and watch do, and reads whichever format the server answered in.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { ResourceClient } from '../../src/client/resource-client.ts'
import { responseFormat } from '../../src/codec/response-format.ts'
import type { RequestSpec } from '../../src/transport/request-spec.ts'
import type { Transport } from '../../src/transport/transport.ts'
import { corpusFile, corpusJson } from '../codec/protobuf/corpus.ts'

const PB = 'application/vnd.kubernetes.protobuf'

/** A transport that answers every request with `bytes` as `contentType` and records what was asked. */
function answering(contentType: string, bytes: Buffer): { transport: Transport; asked: RequestSpec[] } {
  const asked: RequestSpec[] = []
  const transport = {
    async requestBytes(spec: RequestSpec) {
      asked.push(spec)
      return { contentType, bytes }
    },
    async request(spec: RequestSpec) {
      asked.push(spec)
      return JSON.parse(bytes.toString('utf8'))
    },
  } as unknown as Transport
  return { transport, asked }
}

test('a metadata-only get asks for protobuf PartialObjectMetadata, as the metadata-only list and watch do', async () => {
  const { transport, asked } = answering(PB, corpusFile('pods.metadata.get.pb'))
  const pods = new ResourceClient(transport, CORE_TYPES.pods, 'corpus')
  const one = await pods.getMetadata('solo')
  assert.equal(asked.length, 1)
  const spec = asked[0]!
  assert.equal(spec.method, 'GET')
  assert.equal(spec.path, '/api/v1/namespaces/corpus/pods/solo')
  // client-go metadata/metadata.go (ConfigFor): protobuf first, then JSON, both as PartialObjectMetadata.
  assert.equal(
    spec.accept,
    `${PB};as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json`,
  )
  assert.equal(spec.accept, responseFormat(CORE_TYPES.pods, {}, 'PartialObjectMetadata').accept, 'as a watch')
  assert.equal(typeof spec.decodeStatus, 'function', 'an error answered in protobuf is decoded')
  assert.deepStrictEqual(one, corpusJson('pods.metadata.get.json'))
})

test("a metadata-only get with format 'json' asks for JSON only; a JSON answer to the protobuf ask is read as JSON", async () => {
  const json = answering('application/json', corpusFile('pods.metadata.get.json'))
  const pods = new ResourceClient(json.transport, CORE_TYPES.pods, 'corpus')
  assert.deepStrictEqual(
    await pods.getMetadata('solo', { format: 'json' }),
    corpusJson('pods.metadata.get.json'),
  )
  assert.equal(
    json.asked[0]?.accept,
    'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
  )
  assert.deepStrictEqual(await pods.getMetadata('solo'), corpusJson('pods.metadata.get.json'))
  assert.match(json.asked[1]?.accept ?? '', /^application\/vnd\.kubernetes\.protobuf;/)
})
