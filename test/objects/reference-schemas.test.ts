/** The exported schemas for conditions and object references, in a CRD a user's operator defines. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as z from 'zod/mini'
import type { Condition } from '../../src/core/types.ts'
import { ConditionSchema, ConditionsSchema } from '../../src/objects/condition-schema.ts'
import { customResourceDefinition } from '../../src/objects/crd.ts'
import {
  LocalObjectReferenceSchema,
  ObjectReferenceSchema,
} from '../../src/objects/object-reference-schema.ts'

const crd = customResourceDefinition({
  group: 'example.com',
  version: 'v1',
  kind: 'SecretSync',
  plural: 'secretsyncs',
  singular: 'secretsync',
  scope: 'Namespaced',
  spec: z.object({ source: LocalObjectReferenceSchema, owner: z.optional(ObjectReferenceSchema) }),
  status: z.object({ conditions: ConditionsSchema }),
})
const schema = crd.spec.versions[0]!.schema.openAPIV3Schema.properties

test('conditions in a CRD: a list-map keyed by type, each with metav1.Condition’s required fields', () => {
  const conditions = schema.status!.properties!.conditions!
  assert.equal(conditions.type, 'array')
  assert.equal(conditions['x-kubernetes-list-type'], 'map')
  assert.deepEqual(conditions['x-kubernetes-list-map-keys'], ['type'])
  assert.deepEqual(conditions.items!.required, ['type', 'status', 'lastTransitionTime', 'reason', 'message'])
  assert.deepEqual(conditions.items!.properties!.status!.enum, ['True', 'False', 'Unknown'])
  assert.equal(conditions.items!.properties!.lastTransitionTime!.format, 'date-time')
})

test('a condition setCondition writes is a valid ConditionSchema value, and its type is Condition', () => {
  const c: Condition = z.parse(ConditionSchema, {
    type: 'Ready',
    status: 'True',
    lastTransitionTime: '2026-12-02T04:00:00Z',
    reason: 'Synced',
    message: '',
  })
  assert.equal(c.type, 'Ready')
  assert.equal(z.safeParse(ConditionSchema, { ...c, status: 'Yes' }).success, false)
})

test('object references in a CRD: name required and not empty, the rest optional', () => {
  assert.deepEqual(schema.spec!.properties!.source!.required, ['name'])
  assert.deepEqual(schema.spec!.properties!.owner!.required, ['name'])
  assert.equal(schema.spec!.properties!.source!.properties!.name!.minLength, 1)
  assert.equal(z.safeParse(LocalObjectReferenceSchema, { name: '' }).success, false)
  assert.deepEqual(z.parse(ObjectReferenceSchema, { kind: 'Secret', name: 'a', namespace: 'b' }), {
    kind: 'Secret',
    name: 'a',
    namespace: 'b',
  })
})
