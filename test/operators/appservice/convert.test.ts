import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeObject } from '../../../src/core/types.ts'
import { validateAgainst } from '../../../src/objects/validation.ts'
import { AppServiceSpec, AppServiceSpecV1beta1 } from '../../../src/operators/appservice/api.ts'
import { convertAppService, V1ALPHA1_FIELDS_ANNOTATION } from '../../../src/operators/appservice/convert.ts'
import { seededRandom } from '../../support/random.ts'

const ALPHA = 'platform.example.com/v1alpha1'
const BETA = 'platform.example.com/v1beta1'
const RUNS = 2_000

/** A small generator over what each version's schema admits, biased to the cases the mapping must keep apart. */
function generator(seed: number) {
  const r = seededRandom(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const maybe = <T>(f: () => T): T | undefined => (r() < 0.5 ? f() : undefined)
  const opt = <K extends string, V>(k: K, v: V | undefined) => (v === undefined ? {} : { [k]: v })
  const engine = () => pick(['postgres', 'mysql'] as const)
  const size = () => pick(['small', 'medium', 'large'] as const)
  const cls = () => pick([`${engine()}-${size()}`, 'fast', 'postgres', 'mysql-huge', 'a', 'postgres-small-1'])
  const metadata = () => ({
    name: `app-${Math.floor(r() * 1000)}`,
    namespace: 'ns',
    uid: `uid-${Math.floor(r() * 1e6)}`,
    resourceVersion: String(Math.floor(r() * 1e6)),
    generation: 1 + Math.floor(r() * 5),
    ...opt(
      'labels',
      maybe(() => ({ 'app.kubernetes.io/name': 'x' })),
    ),
    // Never an empty map: the apiserver omits one.
    ...opt(
      'annotations',
      maybe(() => ({ note: pick(['a', '{"database":{}}']) })),
    ),
    ...opt(
      'finalizers',
      maybe(() => ['platform.example.com/database-cleanup']),
    ),
  })
  const base = () => ({
    image: pick(['nginx:1.27', 'registry:5000/a/b@sha256:' + 'a'.repeat(64)]),
    ...opt(
      'replicas',
      maybe(() => Math.floor(r() * 5)),
    ),
    ...opt(
      'port',
      maybe(() => 1 + Math.floor(r() * 65535)),
    ),
  })
  const status = () =>
    maybe(() => ({ observedGeneration: 1, readyReplicas: 1, database: { phase: 'Ready' as const } }))
  const object = (apiVersion: string, database: unknown) => ({
    apiVersion,
    kind: 'AppService',
    metadata: metadata(),
    spec: { ...base(), ...opt('database', database) },
    ...opt('status', status()),
  })
  return {
    alpha: () =>
      object(
        ALPHA,
        maybe(() => ({
          ...opt(
            'enabled',
            maybe(() => r() < 0.6),
          ),
          ...opt('class', maybe(cls)),
        })),
      ),
    beta: () =>
      object(
        BETA,
        maybe(() => ({ engine: engine(), size: size() })),
      ),
  }
}

test('property: v1alpha1 → v1beta1 → v1alpha1 gives back the object exactly; the v1beta1 view is valid v1beta1', () => {
  const g = generator(20)
  for (let i = 0; i < RUNS; i++) {
    const a = g.alpha() as KubeObject
    const b = convertAppService(a, BETA)
    assert.equal(b.apiVersion, BETA)
    assert.ok(validateAgainst(AppServiceSpecV1beta1, b.spec, 'spec').ok, JSON.stringify(b.spec))
    assert.deepEqual(convertAppService(b, ALPHA), a, `seed 20, run ${i}`)
  }
})

test('property: v1beta1 → v1alpha1 → v1beta1 gives back the object exactly, with no annotation added', () => {
  const g = generator(21)
  for (let i = 0; i < RUNS; i++) {
    const b = g.beta() as KubeObject
    const a = convertAppService(b, ALPHA)
    assert.ok(validateAgainst(AppServiceSpec, a.spec, 'spec').ok, JSON.stringify(a.spec))
    assert.equal(a.metadata.annotations?.[V1ALPHA1_FIELDS_ANNOTATION], undefined)
    assert.deepEqual(convertAppService(a, BETA), b, `seed 21, run ${i}`)
  }
})

const alpha = (database?: unknown, annotations?: Record<string, string>) =>
  ({
    apiVersion: ALPHA,
    kind: 'AppService',
    metadata: { name: 'a', ...(annotations ? { annotations } : {}) },
    spec: { image: 'nginx:1.27', ...(database ? { database } : {}) },
  }) as KubeObject

test('the mapping: <engine>-<size> classes map to engine and size; others to postgres/small with the annotation', () => {
  assert.deepEqual(convertAppService(alpha({ enabled: true, class: 'mysql-large' }), BETA).spec, {
    image: 'nginx:1.27',
    database: { engine: 'mysql', size: 'large' },
  })
  const fast = convertAppService(alpha({ enabled: true, class: 'fast' }), BETA)
  assert.deepEqual((fast.spec as { database: unknown }).database, { engine: 'postgres', size: 'small' })
  assert.deepEqual(fast.metadata.annotations, {
    [V1ALPHA1_FIELDS_ANNOTATION]: '{"database":{"enabled":true,"class":"fast"}}',
  })
  const off = convertAppService(alpha({ enabled: false, class: 'fast' }, { keep: 'me' }), BETA)
  assert.equal((off.spec as { database?: unknown }).database, undefined)
  assert.equal(off.metadata.annotations?.keep, 'me')
  // Key order does not matter (the apiserver sorts keys): no annotation for a canonical database.
  const sorted = convertAppService(alpha({ class: 'postgres-small', enabled: true }), BETA)
  assert.equal(sorted.metadata.annotations, undefined)
})

test('an annotation that no longer describes the v1beta1 database, or is unreadable, is dropped', () => {
  const b = convertAppService(alpha({ enabled: true, class: 'fast' }), BETA) as KubeObject & {
    spec: { database: { size: string } }
  }
  b.spec.database.size = 'large' // edited in v1beta1 since
  const a = convertAppService(b, ALPHA)
  assert.deepEqual((a.spec as { database: unknown }).database, { enabled: true, class: 'postgres-large' })
  assert.equal(a.metadata.annotations, undefined)
  const junk = { ...b, metadata: { name: 'a', annotations: { [V1ALPHA1_FIELDS_ANNOTATION]: '{not json' } } }
  assert.equal(convertAppService(junk, ALPHA).metadata.annotations, undefined)
})

test('the same version is returned as is; an unknown version is refused; the input is never changed', () => {
  const a = alpha({ enabled: true, class: 'fast' })
  const copy = structuredClone(a)
  assert.equal(convertAppService(a, ALPHA), a)
  convertAppService(a, BETA)
  assert.deepEqual(a, copy)
  assert.throws(() => convertAppService(a, 'platform.example.com/v2'), /cannot convert AppService version v2/)
  // Any group: the test CRDs of other groups convert the same.
  assert.equal(convertAppService(a, 'other.example.com/v1beta1').apiVersion, 'other.example.com/v1beta1')
})
