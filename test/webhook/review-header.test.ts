import assert from 'node:assert/strict'
import { test } from 'node:test'
import { reviewHeader } from '../../src/webhook/review-header.ts'

const header = (text: string) => reviewHeader(Buffer.from(text))

test('reviewHeader reads apiVersion, kind and request.uid past any nesting, without parsing it', () => {
  const deep = `${'{"a":['.repeat(5000)}1${']}'.repeat(5000)}`
  assert.deepEqual(
    header(
      `{"kind":"AdmissionReview","request":{"object":${deep},"uid":"u-1"},"apiVersion":"admission.k8s.io/v1"}`,
    ),
    { kind: 'AdmissionReview', uid: 'u-1', apiVersion: 'admission.k8s.io/v1' },
  )
})

test('reviewHeader: brackets and escapes in strings, non-string values, malformed and non-object input', () => {
  assert.deepEqual(header('{"request":{"note":"}}{{[","uid":"a\\"b"},"kind":"K"}'), { uid: 'a"b', kind: 'K' })
  assert.deepEqual(header('{"kind":7,"apiVersion":null,"request":{"uid":{"x":1}}}'), {})
  assert.deepEqual(header('{"kind":"K","request":['), { kind: 'K' }, 'what was read before the fault stands')
  assert.deepEqual(header('{"request":"text","kind":"K"}'), { kind: 'K' })
  for (const bad of ['', '[]', '"x"', '{', 'null']) assert.deepEqual(header(bad), {}, bad)
})
