/**
 * Which store each of the AppService operator's informers gets from the factory's defaults: its AppServices the
 * compact one (the default of custom resources), its Deployments and Services the eager one it chose by measurement.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CompactIndexer } from '../../../src/cache/compact-indexer.ts'
import { InformerFactory } from '../../../src/cache/factory.ts'
import type { KubeClient } from '../../../src/client/kube-client.ts'
import type { ResourceType } from '../../../src/client/resource.ts'
import type { ResourceClient } from '../../../src/client/resource-client.ts'
import { ManualClock } from '../../../src/core/clock.ts'
import { noopLogger } from '../../../src/core/log.ts'
import { EventRecorder } from '../../../src/objects/events.ts'
import { appServiceController } from '../../../src/operators/appservice/operator.ts'

test('the AppService operator caches AppServices in the compact store and its Deployments and Services in the eager one', () => {
  const client = {
    resource: (type: ResourceType, namespace?: string) => ({ type, namespace }) as unknown as ResourceClient,
  } as unknown as KubeClient
  const clock = new ManualClock()
  const factory = new InformerFactory(client, { clock })
  appServiceController({
    client,
    factory,
    namespaces: [],
    database: undefined,
    recorder: new EventRecorder(client, { controller: 'test', instance: 'test', clock, logger: noopLogger }),
    clock,
    logger: noopLogger,
  })
  const stores = factory.informers
    .map((i) => `${i.describe}: ${i.store instanceof CompactIndexer ? 'compact' : 'eager'}`)
    .sort()
  assert.equal(stores.length, 3, stores.join('; '))
  assert.match(stores[0]!, /appservices.*: compact$/)
  assert.match(stores[1]!, /deployments.*: eager$/)
  assert.match(stores[2]!, /services.*: eager$/)
})
