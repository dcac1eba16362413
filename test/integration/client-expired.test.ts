/**
 * 410 mapping against a real apiserver: with the watch cache off, etcd compaction
 * expires old resourceVersions and continue tokens (exclusive: compaction affects everyone).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { isGoneOrExpired, isResourceExpired } from '../../src/transport/api-error.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv({ exclusive: true })
let client: KubeClient
let ns: string

setup(async () => {
  const { server } = await env().uncached()
  client = adminClient(env(), server)
  defer(() => client.close())
  ns = await env().createNamespace('expired')
})

test('after compaction: exact list at an old RV → 410 Expired; old continue token → 410; watch → ERROR 410', async () => {
  const cms = client.resource(CORE_TYPES.configMaps, ns)
  for (let i = 0; i < 4; i++) await cms.create({ metadata: { name: `c${i}` } })
  const old = await cms.list({ limit: 2 })
  const oldRv = old.metadata.resourceVersion!
  const cont = old.metadata.continue!
  assert.ok(cont)
  // Compacting to revision R keeps R itself, and a watch from RV n starts at n+1:
  // two writes after the old RV put the compaction point beyond where the watch starts.
  await cms.create({ metadata: { name: 'after-1' } })
  await cms.create({ metadata: { name: 'after-2' } })
  await env().compact()

  const exact = await cms
    .list({ resourceVersion: oldRv, resourceVersionMatch: 'Exact' })
    .catch((e: unknown) => e)
  assert.ok(isResourceExpired(exact), String(exact))
  assert.equal((exact as { status: number }).status, 410)

  const page2 = await cms.list({ limit: 2, continue: cont }).catch((e: unknown) => e)
  assert.ok(isGoneOrExpired(page2), String(page2))

  const events = []
  for await (const ev of cms.watch({ resourceVersion: oldRv })) {
    events.push(ev)
    break
  }
  const first = events[0]
  assert.equal(first?.type, 'ERROR', `first event ${JSON.stringify(first)}, old RV ${oldRv}`)
  assert.equal((first.object as { code?: number }).code, 410)
})
