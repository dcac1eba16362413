import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as z from 'zod/mini'
import { customResourceDefinition, openApiFromZod } from '../../src/objects/crd.ts'

test('zod/mini → structural openAPIV3Schema: types, defaults, bounds, required, enums, list-map markers', () => {
  const condition = z.object({ type: z.string(), status: z.enum(['True', 'False', 'Unknown']) })
  const schema = z.object({
    image: z.string().check(z.minLength(1)),
    replicas: z._default(z.int32().check(z.minimum(0)), 1),
    port: z._default(z.int32().check(z.minimum(1), z.maximum(65535)), 8080),
    database: z.optional(
      z.object({ enabled: z._default(z.boolean(), false), class: z.optional(z.string()) }),
    ),
    conditions: z.optional(
      z.array(condition).check(z.meta({ kubernetes: { listType: 'map', listMapKeys: ['type'] } })),
    ),
    labels: z.optional(z.record(z.string(), z.string())),
  })
  assert.deepEqual(openApiFromZod(schema), {
    type: 'object',
    required: ['image'],
    properties: {
      image: { type: 'string', minLength: 1 },
      replicas: { type: 'integer', format: 'int32', minimum: 0, maximum: 2147483647, default: 1 },
      port: { type: 'integer', format: 'int32', minimum: 1, maximum: 65535, default: 8080 },
      database: {
        type: 'object',
        properties: { enabled: { type: 'boolean', default: false }, class: { type: 'string' } },
      },
      conditions: {
        type: 'array',
        items: {
          type: 'object',
          required: ['type', 'status'],
          properties: {
            type: { type: 'string' },
            status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
          },
        },
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
    },
  })
})

test('string formats: an RFC 3339 timestamp becomes format date-time; other formats stay plain strings', () => {
  const schema = z.object({
    at: z.iso.datetime({ offset: true }),
    checked: z.optional(z.string().check(z.iso.datetime())),
    mail: z.email(),
    declared: z.string().check(z.meta({ kubernetes: { format: 'date-time' } })),
  })
  assert.deepEqual(openApiFromZod(schema).properties, {
    at: { type: 'string', format: 'date-time' },
    checked: { type: 'string', format: 'date-time' },
    mail: { type: 'string' },
    declared: { type: 'string', format: 'date-time' },
  })
})

test('constructs a CRD cannot express are refused with the path', () => {
  assert.throws(
    () => openApiFromZod(z.object({ a: z.object({ b: z.union([z.string(), z.number()]) }) })),
    /cannot express zod type "union" at .a.b/,
  )
})

test('customResourceDefinition wires names, scope, subresources and printer columns', () => {
  const crd = customResourceDefinition({
    group: 'example.com',
    version: 'v1',
    kind: 'Widget',
    plural: 'widgets',
    singular: 'widget',
    shortNames: ['wd'],
    scope: 'Namespaced',
    spec: z.object({ size: z.int32() }),
    status: z.object({ ready: z.optional(z.boolean()) }),
    scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size' },
    printerColumns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
  })
  assert.equal(crd.metadata.name, 'widgets.example.com')
  const v = crd.spec.versions[0]!
  assert.deepEqual(v.subresources, {
    status: {},
    scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size' },
  })
  assert.deepEqual(crd.spec.names, {
    kind: 'Widget',
    listKind: 'WidgetList',
    plural: 'widgets',
    singular: 'widget',
    shortNames: ['wd'],
  })
  assert.equal(v.additionalPrinterColumns?.[0]?.name, 'Age')
})

test("the CRD generator reads z.meta from zod's own global registry, which zod keeps on globalThis", () => {
  // crd.ts does not import zod (the root entry would pay zod's load for it): it reads the registry where
  // zod (4.1.13 and later) publishes it. A zod that moves it fails here, by name, before any CRD loses its markers.
  assert.equal((globalThis as { __zod_globalRegistry?: unknown }).__zod_globalRegistry, z.globalRegistry)
  const documented = z.string().check(z.meta({ description: 'the image to run' }))
  assert.deepEqual(openApiFromZod(z.object({ image: documented })).properties, {
    image: { type: 'string', description: 'the image to run' },
  })
})
