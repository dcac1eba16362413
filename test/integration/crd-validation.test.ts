/**
 * The generated CRDs' validation on the real apiserver: the CEL rules (cross-field, transition,
 * reason, fieldPath; optionalOldSelf and messageExpression on a test kind) refuse with their messages and accept the valid case, the
 * CRDs pass the apiserver's CEL cost estimation, a regular expression refuses in words, and every
 * spec field is documented in the OpenAPI v3 that `kubectl explain` reads.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as z from 'zod/mini'
import type { CustomResourceDefinition } from '../../src/api/index.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { customResourceDefinition } from '../../src/objects/crd.ts'
import { celRule } from '../../src/objects/validation.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { validateSpec } from '../../src/operators/appservice/validate.ts'
import { NODECONFIGS, type NodeConfig } from '../../src/operators/nodeconfig/api.ts'
import { validateConfig } from '../../src/operators/nodeconfig/plan.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { ApiError } from '../../src/transport/api-error.ts'
import { installAppServiceCrd } from '../support/appservice.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'
import { installNodeConfigCrd } from './fixtures/nodeconfig-harness.ts'

const { env, setup, defer } = useTestEnv()
let client: KubeClient
let ns: string

setup(async () => {
  client = adminClient(env(), env().server)
  defer(() => client.close())
  // Both installs fail (422) should a rule exceed the apiserver's cost budget.
  await installAppServiceCrd(client)
  await installNodeConfigCrd(client)
  ns = await env().createNamespace('cel')
})

const apps = () => client.resource(APPSERVICES, ns)
const app = (name: string, spec: Record<string, unknown>) =>
  ({ metadata: { name }, spec: { image: 'nginx:1.27', ...spec } }) as unknown as AppService

/** Asserts `write` is refused (422) with a cause at `field` whose message is `message`. */
async function refused(write: Promise<unknown>, field: string, message: string): Promise<void> {
  const err = await write.then(
    () => assert.fail(`accepted; expected ${field}: ${message}`),
    (e: unknown) => e,
  )
  assert.ok(err instanceof ApiError, String(err))
  assert.equal(err.status, 422, err.message)
  assert.deepEqual(
    err.causes.map((c) => [c.field, c.message]),
    [[field, message]],
    err.message,
  )
}

test('database.class is required when the database is enabled: Required value at the class, the operator says the same', async () => {
  await refused(
    apps().create(app('no-class', { database: { enabled: true } })),
    'spec.database.class',
    'Required value: needed when the database is enabled',
  )
  assert.deepEqual(validateSpec({ image: 'nginx:1.27', database: { enabled: true } }), {
    ok: false,
    problem: 'spec.database.class: needed when the database is enabled',
  })
  await apps().create(app('with-class', { database: { enabled: true, class: 'small' } }))
  await apps().create(app('off-no-class', { database: { enabled: false } }))
})

test('a class the database service cannot name is refused in words by both', async () => {
  await refused(
    apps().create(app('bad-class', { database: { enabled: false, class: 'Gold_Tier' } })),
    'spec.database.class',
    'Invalid value: "Gold_Tier": must be lowercase letters, digits or dashes',
  )
  assert.deepEqual(validateSpec({ image: 'nginx:1.27', database: { class: 'Gold_Tier' } }), {
    ok: false,
    problem: 'spec.database.class: must be lowercase letters, digits or dashes',
  })
})

test('the port cannot change while the database is enabled (a transition rule); other edits and a disabled database can', async () => {
  await apps().create(app('fixed-port', { port: 8080, database: { enabled: true, class: 'small' } }))
  await refused(
    apps().patch('fixed-port', { spec: { port: 9090 } }, 'merge'),
    'spec.port',
    'Forbidden: cannot change while the database is enabled',
  )
  // The operator cannot see the old spec: the same change is fine to it.
  assert.equal(
    validateSpec({ image: 'nginx:1.27', port: 9090, database: { enabled: true, class: 'small' } }).ok,
    true,
  )
  await apps().patch('fixed-port', { spec: { replicas: 3 } }, 'merge')
  // Disabling the database in the same update lets the port change.
  const off = await apps().patch(
    'fixed-port',
    { spec: { port: 9090, database: { enabled: false } } },
    'merge',
  )
  assert.equal(off.spec.port, 9090)
  // Without a database the port is free; enabling it in the same update as a port change is too.
  await apps().create(app('free-port', {}))
  await apps().patch('free-port', { spec: { port: 9091 } }, 'merge')
  await apps().patch(
    'free-port',
    { spec: { port: 9092, database: { enabled: true, class: 'small' } } },
    'merge',
  )
})

test('the class cannot change while the database is enabled (a transition rule)', async () => {
  await apps().create(app('fixed-class', { database: { enabled: true, class: 'small' } }))
  await refused(
    apps().patch('fixed-class', { spec: { database: { class: 'large' } } }, 'merge'),
    'spec.database.class',
    'Forbidden: cannot change while the database is enabled',
  )
  await apps().patch('fixed-class', { spec: { database: { enabled: false, class: 'large' } } }, 'merge')
})

test('a NodeConfig path that escapes the root is refused in words, not with the regular expression', async () => {
  const ncs = client.resource(NODECONFIGS)
  const name = `cel-${ns}`
  const config = (path: string, mode?: string) =>
    ({
      metadata: { name },
      spec: { files: [{ path, content: 'x', ...(mode ? { mode } : {}) }] },
    }) as NodeConfig
  const message = 'must be a normalised relative path (no leading /, no . or .. or empty segments)'
  await refused(
    ncs.create(config('../escape.conf')),
    'spec.files[0].path',
    `Invalid value: "../escape.conf": ${message}`,
  )
  await refused(
    ncs.create(config('etc/app.conf', '4755')),
    'spec.files[0].mode',
    'Invalid value: "4755": must be octal permission bits such as "0644"',
  )
  // The agent refuses it in words too (its path check runs first, then the schema's).
  const agent = validateConfig(config('../escape.conf'))
  assert.equal(agent.problems.length, 1)
  assert.doesNotMatch(agent.problems[0]!, /\(\?:|\\x00/)
  await ncs.create(config('etc/app.conf'))
  defer(() => ncs.delete(name))
})

test('the CRDs pass CEL cost estimation, the same rule on an unbounded list of unbounded strings does not; an optionalOldSelf rule runs on create, with its messageExpression', async () => {
  const crds = client.resource(CORE_TYPES.customResourceDefinitions)
  const widgets = (bounded: boolean) =>
    customResourceDefinition({
      group: 'cel.edgeop.test',
      version: 'v1',
      kind: 'Widget',
      plural: 'widgets',
      singular: 'widget',
      scope: 'Namespaced',
      spec: z
        .object({
          names: z
            .array(
              z
                .string()
                .check(
                  ...(bounded ? [z.maxLength(64)] : []),
                  z.regex(/^(?:[a-z0-9]+-?)+[a-z0-9]$/, 'must be a name'),
                ),
            )
            .check(...(bounded ? [z.maxLength(16)] : [])),
        })
        .check(
          celRule({
            rule: 'oldSelf.hasValue() || size(self.names) <= 2',
            message: 'at most 2 names on create',
            optionalOldSelf: true,
          }),
          celRule({
            rule: "size(self.names) == 0 || self.names[0] != 'root1'",
            message: 'reserved',
            messageExpression: "self.names[0] + ' is reserved'",
          }),
        ),
    }) as unknown as CustomResourceDefinition
  const err = await crds.create(widgets(false)).then(
    () => assert.fail('an unbounded rule was accepted'),
    (e: unknown) => e as ApiError,
  )
  assert.equal(err.status, 422, err.message)
  assert.match(err.message, /cost/i)
  await crds.create(widgets(true))
  defer(() => crds.delete('widgets.cel.edgeop.test'))
  const type = {
    group: 'cel.edgeop.test',
    version: 'v1',
    resource: 'widgets',
    namespaced: true,
    kind: 'Widget',
  }
  const w = client.resource(type, ns)
  const widget = (names: string[]) => ({
    apiVersion: 'cel.edgeop.test/v1',
    kind: 'Widget',
    metadata: { name: 'w' },
    spec: { names },
  })
  // An optionalOldSelf rule is evaluated on create too, with oldSelf empty.
  await eventually(
    async () =>
      await w.list().then(
        () => true,
        () => false,
      ),
    { timeoutMs: 30_000, what: 'Widget served' },
  )
  await refused(w.create(widget(['a1', 'b2', 'c3'])), 'spec', 'Invalid value: at most 2 names on create')
  await refused(w.create(widget(['root1'])), 'spec', 'Invalid value: root1 is reserved')
  await w.create(widget(['a1']))
  await w.patch('w', { spec: { names: ['a1', 'b2', 'c3'] } }, 'merge')
})

/** Every field under `schema` that has no description, by path. */
function undocumented(schema: Record<string, unknown>, path: string): string[] {
  const out = typeof schema.description === 'string' && schema.description !== '' ? [] : [path]
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>
  for (const [k, v] of Object.entries(props)) out.push(...undocumented(v, `${path}.${k}`))
  const items = schema.items as Record<string, unknown> | undefined
  if (items?.properties)
    for (const [k, v] of Object.entries(items.properties as object))
      out.push(...undocumented(v, `${path}[].${k}`))
  return out
}

test('kubectl explain: every spec field of every kind has a description in the served OpenAPI v3', async () => {
  type Doc = { components: { schemas: Record<string, { properties: { spec: Record<string, unknown> } }> } }
  let doc: Doc | undefined
  await eventually(
    async () => {
      doc = await client.request<Doc>({
        method: 'GET',
        path: '/openapi/v3/apis/platform.example.com/v1alpha1',
      })
      const names = Object.keys(doc.components.schemas)
      return ['AppService', 'NodeConfig', 'NodeConfigReport'].every((k) =>
        names.some((n) => n.endsWith(`.${k}`)),
      )
    },
    { timeoutMs: 30_000, what: 'every kind in the OpenAPI v3' },
  )
  for (const kind of ['AppService', 'NodeConfig', 'NodeConfigReport']) {
    const [, schema] = Object.entries(doc!.components.schemas).find(([n]) => n.endsWith(`.${kind}`))!
    assert.deepEqual(undocumented(schema.properties.spec, 'spec'), [], kind)
  }
})
