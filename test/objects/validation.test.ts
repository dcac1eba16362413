/** CEL rules and descriptions from one zod schema: what the CRD generator emits, and what parsing enforces. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as z from 'zod/mini'
import { openApiFromZod } from '../../src/objects/crd.ts'
import { celRule, validateAgainst } from '../../src/objects/validation.ts'

const Volume = z
  .object({
    size: z._default(z.int32().check(z.minimum(1), z.meta({ description: 'Size in GiB.' })), 1),
    tier: z.optional(
      z
        .string()
        .check(
          z.maxLength(16),
          celRule({ rule: "self != 'legacy'", message: 'is retired', test: (t) => t !== 'legacy' }),
        ),
    ),
    shared: z._default(z.boolean(), false),
  })
  .check(
    z.meta({ description: 'A volume.' }),
    celRule({
      rule: '!self.shared || has(self.tier)',
      message: 'needed when shared',
      reason: 'FieldValueRequired',
      fieldPath: '.tier',
      test: (v) => !v.shared || v.tier !== undefined,
    }),
    celRule({
      rule: 'self.size >= oldSelf.size',
      message: 'cannot shrink',
      messageExpression: "'cannot shrink below ' + string(oldSelf.size)",
      reason: 'FieldValueForbidden',
      fieldPath: '.size',
    }),
    celRule({
      rule: 'oldSelf.hasValue() || !self.shared',
      message: 'cannot be created shared',
      optionalOldSelf: true,
    }),
  )

test('a celRule becomes x-kubernetes-validations on the schema it is attached to, every field as given, without its test', () => {
  const out = openApiFromZod(Volume)
  assert.equal(out.description, 'A volume.')
  assert.deepEqual(out['x-kubernetes-validations'], [
    {
      rule: '!self.shared || has(self.tier)',
      message: 'needed when shared',
      reason: 'FieldValueRequired',
      fieldPath: '.tier',
    },
    {
      rule: 'self.size >= oldSelf.size',
      message: 'cannot shrink',
      messageExpression: "'cannot shrink below ' + string(oldSelf.size)",
      reason: 'FieldValueForbidden',
      fieldPath: '.size',
    },
    {
      rule: 'oldSelf.hasValue() || !self.shared',
      message: 'cannot be created shared',
      optionalOldSelf: true,
    },
  ])
  assert.deepEqual(out.properties?.tier, {
    type: 'string',
    maxLength: 16,
    'x-kubernetes-validations': [{ rule: "self != 'legacy'", message: 'is retired' }],
  })
  // A description inside a default stays on the field; a field without rules gets no empty list.
  assert.deepEqual(out.properties?.size, {
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: 2147483647,
    description: 'Size in GiB.',
    default: 1,
  })
  assert.equal(out.properties?.shared?.['x-kubernetes-validations'], undefined)
})

test('a regular expression with a message becomes a matches() rule with it; without one it stays a pattern', () => {
  const out = openApiFromZod(
    z.object({
      name: z.string().check(z.maxLength(8), z.regex(/^[a-z]\w*$/, 'must start with a letter')),
      code: z.string().check(z.regex(/^\d+$/)),
    }),
  )
  assert.deepEqual(out.properties?.name, {
    type: 'string',
    maxLength: 8,
    'x-kubernetes-validations': [
      { rule: String.raw`self.matches(r'^[a-z]\w*$')`, message: 'must start with a letter' },
    ],
  })
  assert.deepEqual(out.properties?.code, { type: 'string', pattern: String.raw`^\d+$` })
  assert.throws(
    () => openApiFromZod(z.string().check(z.regex(/^'$/, 'no quotes'))),
    /pattern .* with a message/,
  )
})

test('parsing runs each rule that has a test, reporting its message at its fieldPath; transition rules are the apiserver’s', () => {
  assert.deepEqual(validateAgainst(Volume, { shared: true }, 'spec'), {
    ok: false,
    problems: ['spec.tier: needed when shared'],
  })
  assert.deepEqual(validateAgainst(Volume, { shared: true, tier: 'legacy' }, 'spec'), {
    ok: false,
    problems: ['spec.tier: is retired'],
  })
  // `self.size >= oldSelf.size` and the optionalOldSelf rule have no test: parsing cannot see the old object.
  assert.deepEqual(validateAgainst(Volume, { shared: true, tier: 'fast' }, 'spec'), {
    ok: true,
    value: { size: 1, shared: true, tier: 'fast' },
  })
})

test('bounds, types, enums and required fields are refused in words, list items by index', () => {
  const schema = z.object({
    name: z.string().check(z.minLength(2), z.maxLength(4)),
    port: z.int32().check(z.maximum(65535)),
    phase: z.optional(z.enum(['A', 'B'])),
    items: z.optional(z.array(z.object({ id: z.string() })).check(z.maxLength(2))),
  })
  const check = validateAgainst(
    schema,
    { name: 'x', port: 70000, phase: 'C', items: [{ id: 1 }, {}] },
    'spec',
  )
  assert.deepEqual(check, {
    ok: false,
    problems: [
      'spec.name: must be at least 2 characters',
      'spec.port: must be at most 65535',
      'spec.phase: must be one of A, B',
      'spec.items[0].id: must be string',
      'spec.items[1].id: is required',
    ],
  })
  assert.deepEqual(validateAgainst(schema, { name: 'abcde', port: 'x', items: [{}, {}, {}] }, 'spec'), {
    ok: false,
    problems: [
      'spec.name: must be at most 4 characters',
      'spec.port: must be number',
      'spec.items: must be at most 2 items',
    ],
  })
})
