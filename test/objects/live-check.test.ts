import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ResourceClient } from '../../src/client/resource-client.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { LiveCheck } from '../../src/objects/live-check.ts'
import { ApiError } from '../../src/transport/api-error.ts'

const obj = (rv: string, uid = 'u-1'): KubeObject => ({
  metadata: { name: 'web', namespace: 'a', uid, resourceVersion: rv },
})

/** A client whose `get` answers from `live` (undefined: 404) and counts calls. */
function fakeClient(state: { live: KubeObject | undefined; gets: number }): ResourceClient {
  return {
    get: async (name: string, o: { namespace?: string } = {}) => {
      state.gets++
      assert.equal(`${o.namespace}/${name}`, 'a/web')
      if (state.live === undefined)
        throw new ApiError({
          status: 404,
          reason: 'NotFound',
          message: 'appservices "web" not found',
          method: 'GET',
          path: '/x',
        })
      return state.live
    },
  } as unknown as ResourceClient
}

test('LiveCheck: a cached version equal to the live one is confirmed once, then without a request', async () => {
  const state = { live: obj('10') as KubeObject | undefined, gets: 0 }
  const check = new LiveCheck()
  assert.deepEqual(await check.confirm(fakeClient(state), obj('10')), { object: obj('10'), behind: false })
  assert.deepEqual(await check.confirm(fakeClient(state), obj('10')), { object: obj('10'), behind: false })
  assert.equal(state.gets, 1, 'the second confirmation is answered from the memo')
  assert.equal(check.size, 1)
})

test('LiveCheck: a cache behind the API is reported with the live object, which is then trusted', async () => {
  const state = { live: obj('12') as KubeObject | undefined, gets: 0 }
  const check = new LiveCheck()
  const out = await check.confirm(fakeClient(state), obj('10'))
  assert.equal(out.behind, true)
  assert.equal(out.object?.metadata.resourceVersion, '12', 'the live object, not the cached one')
  assert.equal(check.size, 1, 'the live version is remembered')
  // The cache catches up: no further read.
  assert.deepEqual(await check.confirm(fakeClient(state), obj('12')), { object: obj('12'), behind: false })
  assert.deepEqual(await check.confirm(fakeClient(state), obj('12')), { object: obj('12'), behind: false })
  assert.equal(state.gets, 1)
  // The stale version is still not trusted.
  assert.equal((await check.confirm(fakeClient(state), obj('10'))).behind, true)
  assert.equal(state.gets, 2)
})

test('LiveCheck: an object already gone, or replaced by a new one of the same name, is not live', async () => {
  const state = { live: undefined as KubeObject | undefined, gets: 0 }
  const check = new LiveCheck()
  assert.deepEqual(await check.confirm(fakeClient(state), obj('10')), { object: undefined, behind: true })
  state.live = obj('10', 'u-2') // same name and, by chance, the same resourceVersion string
  const out = await check.confirm(fakeClient(state), obj('10', 'u-1'))
  assert.equal(out.behind, true, 'another UID is another object')
  assert.equal(out.object?.metadata.uid, 'u-2')
})

test('LiveCheck: a version that was confirmed is asked again once the cache shows another', async () => {
  const state = { live: obj('10') as KubeObject | undefined, gets: 0 }
  const check = new LiveCheck()
  await check.confirm(fakeClient(state), obj('10'))
  state.live = obj('11')
  assert.equal((await check.confirm(fakeClient(state), obj('11'))).behind, false)
  assert.equal(state.gets, 2)
})

test('LiveCheck: remember() takes a write’s answer as live; forget() drops the key', async () => {
  const state = { live: obj('20') as KubeObject | undefined, gets: 0 }
  const check = new LiveCheck()
  check.remember(obj('20'))
  assert.deepEqual(await check.confirm(fakeClient(state), obj('20')), { object: obj('20'), behind: false })
  assert.equal(state.gets, 0)
  check.forget('a/web')
  assert.equal(check.size, 0)
  await check.confirm(fakeClient(state), obj('20'))
  assert.equal(state.gets, 1)
})

test('LiveCheck: other API errors reject (the reconcile retries with backoff)', async () => {
  const client = {
    get: async () => {
      throw new ApiError({
        status: 503,
        reason: 'ServiceUnavailable',
        message: 'x',
        method: 'GET',
        path: '/x',
      })
    },
  } as unknown as ResourceClient
  await assert.rejects(
    new LiveCheck().confirm(client, obj('1')),
    (e: unknown) => (e as ApiError).status === 503,
  )
})
