/**
 * Which watched resources count as "not served": only those discovery answered without.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { MappingQuery } from '../../src/client/discovery.ts'
import type { ResourceType } from '../../src/client/resource.ts'
import { EdgeopError } from '../../src/core/errors.ts'
import { crdName, findUnserved, UnservedResourcesError } from '../../src/manager/served-resources.ts'

const type = (group: string, resource: string, version = 'v1'): ResourceType => ({
  group,
  version,
  resource,
  namespaced: true,
  kind: 'X',
})

test('only resources discovery lacks are returned, in the order given', async () => {
  const served = new Set(['/v1/configmaps', 'apps/v1/deployments'])
  const mapper = {
    mapping: async (q: MappingQuery) => {
      if ('resource' in q && served.has(`${q.group}/${q.version}/${q.resource}`)) return {}
      throw new EdgeopError('EDGEOP_ERR_DISCOVERY', 'no such resource')
    },
  }
  const types = [
    type('', 'configmaps'),
    type('b.example.com', 'bees'),
    type('apps', 'deployments'),
    type('a.example.com', 'ants', 'v2'),
  ]
  assert.deepEqual(await findUnserved(mapper, types), [types[1], types[3]])
  const err = new UnservedResourcesError([types[1]!, types[3]!])
  assert.deepEqual(err.crds, ['bees.b.example.com', 'ants.a.example.com'])
  assert.equal(
    err.message,
    'the API server does not serve bees.b.example.com/v1, ants.a.example.com/v2: they are watched but not ' +
      'installed; install the CustomResourceDefinitions "bees.b.example.com", "ants.a.example.com" before starting',
  )
  assert.equal(crdName(type('', 'pods')), 'pods')
})

test('a discovery that fails (network, RBAC) rejects instead of calling anything missing', async () => {
  const mapper = {
    mapping: async () => {
      throw new EdgeopError('EDGEOP_ERR_NETWORK', 'connect ECONNREFUSED')
    },
  }
  await assert.rejects(findUnserved(mapper, [type('a.example.com', 'ants')]), { code: 'EDGEOP_ERR_NETWORK' })
})
