import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  CONVERT_PATH,
  MUTATE_PATH,
  VALIDATE_PATH,
} from '../../../src/operators/appservice/deployment-names.ts'
import {
  appServiceWebhooks,
  NAME_LABEL,
  validateAppService,
} from '../../../src/operators/appservice/webhooks.ts'
import { WebhookServer } from '../../../src/webhook/webhook-server.ts'

test('validation denies what the reconciler could only mark Degraded, with its message (422)', () => {
  assert.deepEqual(validateAppService({ image: 'Not An/Image!' }), {
    allowed: false,
    message: 'spec.image "Not An/Image!" is not a valid image reference',
    code: 422,
  })
  assert.equal(validateAppService({ image: '' }).allowed, false)
})

test('validation allows a pinned image silently and warns about an unpinned one', () => {
  for (const image of ['nginx:1.27', 'registry:5000/team/app:v2', `app@sha256:${'a'.repeat(64)}`])
    assert.deepEqual(validateAppService({ image }), {}, image)
  for (const image of ['nginx', 'nginx:latest', 'registry:5000/team/app'])
    assert.match(validateAppService({ image }).warnings?.[0] ?? '', /has no fixed tag or digest/, image)
})

test('the mutating webhook defaults app.kubernetes.io/name to the name and keeps a label the user set', async () => {
  const server = new WebhookServer()
  appServiceWebhooks().register(server, undefined)
  assert.deepEqual(server.paths, [VALIDATE_PATH, MUTATE_PATH, CONVERT_PATH])
  const patch = async (metadata: Record<string, unknown>) => {
    const { body } = await server.serve(
      MUTATE_PATH,
      JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: { uid: 'u', operation: 'CREATE', object: { metadata, spec: { image: 'x:1' } } },
      }),
    )
    const p = (body as { response: { patch?: string } }).response.patch
    return p ? JSON.parse(Buffer.from(p, 'base64').toString()) : []
  }
  assert.deepEqual(await patch({ name: 'web' }), [
    { op: 'add', path: '/metadata/labels', value: { [NAME_LABEL]: 'web' } },
  ])
  assert.deepEqual(await patch({ name: 'web', labels: { a: 'b' } }), [
    { op: 'add', path: `/metadata/labels/${NAME_LABEL.replace('/', '~1')}`, value: 'web' },
  ])
  assert.deepEqual(await patch({ name: 'web', labels: { [NAME_LABEL]: 'shop' } }), [])
  assert.deepEqual(await patch({ generateName: 'web-' }), [])
})
