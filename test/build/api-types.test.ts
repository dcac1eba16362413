/**
 * The typed built-ins (src/api/): regenerated from the committed OpenAPI subset they are byte for
 * byte the committed files, they compile to no code at all, the fixture is the Kubernetes version
 * of the test control plane, and the OpenAPI → TypeScript mapping does what its module says.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import * as esbuild from 'esbuild'
import { emitApiTypes } from '../../build/api-types/emit-api-types.ts'
import { openApiSubset, ROOT_GROUPS, type Schema } from '../../build/api-types/openapi-subset.ts'
import { ROOT } from '../../build/artifact.ts'
import { generatedFiles, readFixture, TYPES_FILE } from '../../build/gen-api-types.ts'
import { readVersions } from '../controlplane/assets.ts'

test('src/api/ is what `npm run gen:types` makes from the committed OpenAPI subset', async () => {
  const files = generatedFiles(await readFixture())
  assert.deepEqual(Object.keys(files).sort(), ['src/api/index.ts', 'src/api/kubernetes.ts'])
  for (const [file, text] of Object.entries(files))
    assert.equal(await readFile(join(ROOT, file), 'utf8'), text, `${file} differs: run npm run gen:types`)
})

test('the generated types compile to no code', async () => {
  for (const file of [TYPES_FILE, 'src/api/index.ts']) {
    const source = await readFile(join(ROOT, file), 'utf8')
    const { code } = await esbuild.transform(source, { loader: 'ts', format: 'esm', minify: true })
    assert.equal(code.trim(), '', `${file} emits code`)
  }
})

test('the fixture comes from the Kubernetes version of the test control plane', async () => {
  const fixture = await readFixture()
  assert.equal(fixture.kubernetesVersion, `v${readVersions().kubernetes}`)
  assert.deepEqual(
    fixture.groupVersions,
    ROOT_GROUPS.map((g) => g.path),
  )
  for (const root of ROOT_GROUPS.flatMap((g) => g.roots)) assert.ok(fixture.schemas[root], `${root} missing`)
})

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

test('the mapping: apiVersion/kind as documented strings, optional members with | undefined, required, int-or-string, int64, enums, maps, TSDoc', () => {
  const schemas = {
    'io.k8s.api.demo.v1.Widget': {
      description: 'Widget is a demo.',
      type: 'object',
      required: ['spec'],
      'x-kubernetes-group-version-kind': [{ group: 'demo.io', version: 'v1', kind: 'Widget' }],
      properties: {
        apiVersion: { type: 'string', description: 'APIVersion.' },
        kind: { type: 'string', description: 'Kind.' },
        metadata: { allOf: [ref('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta')], description: 'Meta.' },
        spec: { allOf: [ref('io.k8s.api.demo.v1.WidgetSpec')], description: 'The spec.' },
      },
    },
    'io.k8s.api.demo.v1.WidgetSpec': {
      description: 'WidgetSpec is the spec.',
      type: 'object',
      required: ['size'],
      properties: {
        size: { type: 'integer', format: 'int64', description: 'Size.\n\nDeprecated: use bytes.' },
        port: { allOf: [ref('io.k8s.apimachinery.pkg.util.intstr.IntOrString')], description: 'Port.' },
        surge: { 'x-kubernetes-int-or-string': true, description: 'Surge.' },
        limits: {
          type: 'object',
          additionalProperties: ref('io.k8s.apimachinery.pkg.api.resource.Quantity'),
        },
        policy: { type: 'string', enum: ['Always', 'Never'], description: 'Policy, with */ inside.' },
        at: { allOf: [ref('io.k8s.apimachinery.pkg.apis.meta.v1.Time')], description: 'When.' },
        tags: { type: 'array', items: { 'x-kubernetes-int-or-string': true }, description: 'Tags.' },
      },
    },
  }
  const { text, names } = emitApiTypes(schemas, ['io.k8s.api.demo.v1.Widget'], '// demo')
  assert.deepEqual(names, ['Widget', 'WidgetSpec'])
  const squash = text.replace(/\s+/g, ' ')
  for (const expected of [
    "import type { KubeObject } from '../core/types.ts'",
    'export interface Widget extends KubeObject {',
    'apiVersion?: string | undefined',
    'Always `demo.io/v1` for this kind.',
    'kind?: string | undefined',
    'Always `Widget` for this kind.',
    'spec: WidgetSpec',
    'size: number',
    '@deprecated use bytes.',
    'port?: number | string | undefined',
    'surge?: number | string | undefined',
    'limits?: Record<string, string> | undefined',
    'policy?: "Always" | "Never" | undefined',
    'with *\\/ inside.',
    'at?: string | undefined',
    'tags?: (number | string)[] | undefined',
    '* `limits` (undocumented in the OpenAPI document).',
    '`demo.io/v1` Widget, generated from OpenAPI schema `io.k8s.api.demo.v1.Widget`.',
  ])
    assert.ok(squash.includes(expected), `missing ${expected}`)
  assert.ok(!/metadata/.test(text), 'metadata is inherited from KubeObject')
})

test('two schemas with one short name fail unless RENAMES names one of them', () => {
  const obj = { type: 'object', properties: { a: { type: 'string' } } }
  const schemas = {
    'io.k8s.api.a.v1.Root': {
      type: 'object',
      properties: { x: ref('io.k8s.api.a.v1.Port'), y: ref('io.k8s.api.b.v1.Port') },
    },
    'io.k8s.api.a.v1.Port': obj,
    'io.k8s.api.b.v1.Port': obj,
  }
  assert.throws(
    () => emitApiTypes(schemas, ['io.k8s.api.a.v1.Root'], ''),
    /would both be named Port: add one to RENAMES/,
  )
})

test('the subset is what the roots reach, and a missing or diverging schema is an error', () => {
  const docs = (
    extra: Record<string, Schema>,
  ): Record<string, { components: { schemas: Record<string, Schema> } }> =>
    Object.fromEntries(
      ROOT_GROUPS.map((g) => [
        g.path,
        {
          components: {
            schemas: {
              ...Object.fromEntries(
                g.roots.map((r) => [r, { type: 'object', properties: { s: ref('Shared') } }]),
              ),
              ...extra,
            },
          },
        },
      ]),
    )
  const subset = openApiSubset(docs({ Shared: { type: 'string' }, Unreached: { type: 'string' } }))
  assert.ok(subset['Shared'] && !subset['Unreached'])
  assert.equal(Object.keys(subset).length, ROOT_GROUPS.flatMap((g) => g.roots).length + 1)
  assert.throws(() => openApiSubset(docs({})), /schema Shared is referenced but no document defines it/)
  const diverging = docs({ Shared: { type: 'string' } })
  diverging['apis/apps/v1']!.components.schemas['Shared'] = { type: 'integer' }
  assert.throws(() => openApiSubset(diverging), /schema Shared differs between group-version documents/)
})
