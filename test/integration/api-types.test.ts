/**
 * The committed OpenAPI subset (build/api-types/openapi.json, the source of src/api/) is what the
 * real apiserver serves for the typed kinds: a Kubernetes upgrade of the test control plane that
 * changes any of their schemas fails here, and `npm run gen:types -- --fetch` shows it as a diff.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fetchFixture, readFixture } from '../../build/gen-api-types.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, defer } = useTestEnv()

test('the committed OpenAPI subset equals what the apiserver serves for the typed kinds', async () => {
  const client = adminClient(env(), env().server)
  defer(() => client.close())
  const served = await fetchFixture(client)
  const committed = await readFixture()
  assert.equal(committed.kubernetesVersion, served.kubernetesVersion)
  assert.deepEqual(Object.keys(committed.schemas), Object.keys(served.schemas), 'the set of schemas differs')
  for (const name of Object.keys(served.schemas))
    assert.deepEqual(committed.schemas[name], served.schemas[name], `schema ${name} differs`)
  assert.deepEqual(committed, served)
})
