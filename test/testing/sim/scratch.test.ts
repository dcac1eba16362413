import assert from 'node:assert/strict'
import { test } from 'node:test'
import { InformerFactory } from '../../../src/cache/index.ts'
import { sleep } from '../../../src/core/index.ts'
import { EventRecorder } from '../../../src/objects/index.ts'
import { APPSERVICES, AppServiceSpec, appServiceController } from '../../../src/operators/appservice/index.ts'
import { deploymentRollouts } from '../../../src/testing/sim/deployment-rollouts.ts'
import { failureReport } from '../../../src/testing/sim/replay.ts'
import { simulate } from '../../../src/testing/sim/simulate.ts'

test('scratch', async () => {
  const r = await simulate({
    seed: 1,
    durationMs: 600_000,
    faults: false,
    resources: [{ type: APPSERVICES, spec: AppServiceSpec }],
    setup: (c) => void deploymentRollouts(c.store, c.clock),
    processes: [
      {
        name: 'operator',
        async run({ client, clock, signal }) {
          const factory = new InformerFactory(client, { clock })
          const recorder = new EventRecorder(client, { controller: 'sim', instance: 'op', clock })
          const c = appServiceController({
            client,
            factory,
            namespaces: [],
            database: undefined,
            recorder,
            clock,
          })
          factory.start(signal)
          await c.run(signal)
        },
      },
    ],
    async workload({ client, clock, trace }) {
      const apps = client.resource(APPSERVICES, 'default')
      await apps.create({
        apiVersion: 'platform.example.com/v1alpha1',
        kind: 'AppService',
        metadata: { name: 'a' },
        spec: { image: 'nginx:1', replicas: 2, port: 80 },
      } as never)
      trace('created a')
      await sleep(60_000, clock)
    },
    liveness: [],
  })
  console.log(r.wallMs, r.steps, r.requests, r.virtualMs)
  console.log(failureReport({ ...r, failure: { kind: 'safety', invariant: 'x', message: 'y', at: 0 } }, 60))
  assert.equal(r.failure, undefined)
})
