import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { parseYaml } from '../../../src/config/yaml/yaml.ts'
import { MAX_CONTENT_BYTES, nodeConfigCrd } from '../../../src/operators/nodeconfig/api.ts'
import { nodeConfigReportCrd, reportName } from '../../../src/operators/nodeconfig/report-api.ts'

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

test('deploy/agent/report-crd.yaml is the NodeConfigReport CRD generated from its schema, selectable by node and NodeConfig', async () => {
  const crd = nodeConfigReportCrd()
  assert.deepEqual(
    parseYaml(await readFile(join(import.meta.dirname, '../../../deploy/agent/report-crd.yaml'), 'utf8')),
    crd,
  )
  assert.deepEqual(crd.spec.versions[0]!.selectableFields, [
    { jsonPath: '.spec.nodeName' },
    { jsonPath: '.spec.nodeConfig' },
  ])
  assert.deepEqual(crd.spec.versions[0]!.subresources, {}, 'no status subresource: one write per report')
})

test('a report name is <nodeconfig>.<node>, shortened with a hash past 253 characters, one per pair', () => {
  assert.equal(reportName('chrony', 'edge-1'), 'chrony.edge-1')
  const long = 'n'.repeat(200)
  const a = reportName(long, 'x'.repeat(100))
  assert.equal(a.length <= 253, true)
  assert.notEqual(a, reportName(long, `${'x'.repeat(99)}y`))
})
