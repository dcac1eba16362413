import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { parseYaml } from '../../../src/config/yaml/yaml.ts'
import { MAX_CONTENT_BYTES, nodeConfigCrd } from '../../../src/operators/nodeconfig/api.ts'

const CRD_FILE = join(import.meta.dirname, '../../../deploy/agent/crd.yaml')

test('deploy/agent/crd.yaml is the CRD generated from the zod schemas', async () => {
  assert.deepEqual(
    parseYaml(await readFile(CRD_FILE, 'utf8')),
    nodeConfigCrd(),
    'regenerate it as its header says',
  )
})

test('the CRD: cluster-scoped, status subresource, list-maps keyed by path and by node name, caps in the schema', () => {
  const crd = nodeConfigCrd()
  assert.equal(crd.spec.scope, 'Cluster')
  assert.deepEqual(crd.spec.names.shortNames, ['nodecfg'])
  const version = crd.spec.versions[0]!
  assert.deepEqual(version.subresources, { status: {} })
  // biome-ignore lint/suspicious/noExplicitAny: walking a generated schema
  const props = version.schema.openAPIV3Schema.properties as any
  const files = props.spec.properties.files
  assert.equal(files['x-kubernetes-list-type'], 'map')
  assert.deepEqual(files['x-kubernetes-list-map-keys'], ['path'])
  assert.deepEqual(files.items.required, ['path', 'content'])
  assert.equal(files.items.properties.content.maxLength, MAX_CONTENT_BYTES)
  assert.equal(files.items.properties.mode.default, '0644')
  const nodes = props.status.properties.nodes
  assert.equal(nodes['x-kubernetes-list-type'], 'map')
  assert.deepEqual(nodes['x-kubernetes-list-map-keys'], ['name'])
  assert.deepEqual(nodes.items.required, ['name', 'state'])
})
