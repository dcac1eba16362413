/**
 * The kubeconfig decoder (src/config/kubeconfig-schema.ts) is written out without zod, so that loading a
 * kubeconfig does not load zod (about 14 MB of RSS). It must decode exactly as the zod/mini schema it
 * replaced: the same value (unknown fields dropped, numbers and booleans in string fields turned into
 * strings, null kept) and, for a bad file, the same message naming the first problem. The zod schema is
 * kept as the reference in test/config/support/kubeconfig-zod-oracle.ts; both see the same generated files.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { decodeKubeconfig } from '../../src/config/kubeconfig-schema.ts'
import { zodDecodeKubeconfig } from './support/kubeconfig-zod-oracle.ts'

/** Any YAML-decoded value, small: what a wrong field may hold. */
const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1.5, -0),
    fc.string({ maxLength: 4 }),
    fc.array(tie('value'), { maxLength: 2 }),
    fc.dictionary(fc.constantFrom('a', 'name', 'constructor'), tie('value'), { maxKeys: 2 }),
  ),
})).value

/** A field's right kind of value most of the time, anything else sometimes, and absent or null. */
function field(right: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 6, arbitrary: right }, { weight: 1, arbitrary: anyValue })
}

const str = field(fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean()))
const bool = field(fc.boolean())

function mapping(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  return field(
    fc.record({ ...fields, unknownField: anyValue }, { requiredKeys: [] }).map((o) => o as unknown),
  )
}

function list(item: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return field(
    fc.array(fc.oneof({ weight: 5, arbitrary: item }, { weight: 1, arbitrary: fc.constant(null) }), {
      maxLength: 3,
    }),
  )
}

const extensions = list(mapping({ name: str, extension: anyValue }))
const cluster = mapping({
  server: str,
  'tls-server-name': str,
  'insecure-skip-tls-verify': bool,
  'certificate-authority': str,
  'certificate-authority-data': str,
  'proxy-url': str,
  'disable-compression': bool,
  extensions,
})
const exec = mapping({
  command: str,
  args: list(str),
  env: list(mapping({ name: str, value: str })),
  apiVersion: str,
  installHint: str,
  provideClusterInfo: bool,
  interactiveMode: str,
})
const user = mapping({
  'client-certificate': str,
  'client-certificate-data': str,
  'client-key': str,
  'client-key-data': str,
  token: str,
  tokenFile: str,
  as: str,
  'as-uid': str,
  'as-groups': list(str),
  'as-user-extra': field(fc.dictionary(fc.string({ maxLength: 3 }), anyValue, { maxKeys: 2 })),
  username: str,
  password: str,
  'auth-provider': mapping({ name: str }),
  exec,
})
const context = mapping({ cluster: str, user: str, namespace: str, extensions })
const kubeconfig = mapping({
  'current-context': str,
  clusters: list(mapping({ name: str, cluster })),
  users: list(mapping({ name: str, user })),
  contexts: list(mapping({ name: str, context })),
})

test('the kubeconfig decoder decodes as the zod/mini schema did: the same value or the same first problem', () => {
  fc.assert(
    fc.property(kubeconfig, (data) => {
      assert.deepStrictEqual(decodeKubeconfig(data), zodDecodeKubeconfig(data))
    }),
    { numRuns: 3000 },
  )
})

test('the kubeconfig decoder names the first problem in field order, with the entry it is in', () => {
  const data = {
    clusters: [{ name: 'prod', cluster: { server: ['x'], 'insecure-skip-tls-verify': 'yes' } }],
    users: 'nobody',
  }
  const message = 'clusters[0].cluster.server (cluster "prod"): expected a string, got a list'
  assert.deepEqual(decodeKubeconfig(data), { ok: false, message })
  assert.deepEqual(zodDecodeKubeconfig(data), { ok: false, message })
})
