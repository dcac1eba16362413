/**
 * Parked keys that survive, on the real control plane: the AppService controller parks an unusable
 * AppService; a standby replica (informers running, workers not, as a manager runs one while another
 * leads) lists it as parked; the leader stops and the standby takes over without reconciling it; a
 * replica restarted in the middle of the parked state lists it from its initial list; the retry-now
 * annotation replays it on the new leader, and a fixed spec is reconciled. Nothing was written to
 * keep it: each replica reads the Degraded condition the park already wrote.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { InformerFactory } from '../../src/cache/factory.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { RETRY_NOW_ANNOTATION } from '../../src/controller/parked-keys.ts'
import { noopLogger } from '../../src/core/log.ts'
import { EventRecorder } from '../../src/objects/events.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { appServiceController } from '../../src/operators/appservice/operator.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { appServiceSetup, appServiceWhere, condition } from '../support/appservice.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv()
let client: KubeClient
let ns: string
setup(async () => {
  ;({ client, ns } = await appServiceSetup({ env, defer }, 'parked-restart'))
})

/** One replica: its informers run from the start; its workers only once `lead()` is called. */
async function replica(name: string) {
  const factory = new InformerFactory(client)
  const recorder = new EventRecorder(client, {
    controller: 'platform.example.com/appservice',
    instance: name,
  })
  const controller = appServiceController({
    client,
    factory,
    recorder,
    namespaces: [ns],
    database: undefined,
    logger: noopLogger,
  })
  const reconciled: string[] = []
  const get = controller.queue.get.bind(controller.queue)
  controller.queue.get = async () => {
    const r = await get()
    // What a worker takes and reconciles: a parked key it takes is put back unreconciled.
    if (!r.shutdown && !controller.parked().some((p) => p.key === r.item)) reconciled.push(r.item)
    return r
  }
  const ac = new AbortController()
  factory.start(ac.signal)
  await factory.whenSynced(undefined, 30_000)
  let running: Promise<void> | undefined
  const stop = async (): Promise<void> => {
    ac.abort()
    await running
    await factory.stopped()
    await recorder.flush()
  }
  defer(stop)
  return {
    controller,
    reconciled,
    lead: () => {
      running = controller.run(ac.signal)
    },
    stop,
    parkedKeys: () => controller.parked().map((p) => `${p.key} ${p.reason} ${p.errorClass}`),
  }
}

test('a parked AppService stays parked through a leader change and a restart, on every replica, and replays', async () => {
  const apps = client.resource(APPSERVICES, ns)
  const key = `${ns}/bad`
  const first = await replica('first')
  const standby = await replica('standby')
  first.lead()
  await apps.create({ metadata: { name: 'bad' }, spec: { image: 'Not A Valid Image' } } as AppService)
  await eventually(() => first.parkedKeys().length === 1, { timeoutMs: 30_000, what: 'parked on the leader' })
  assert.deepEqual(first.parkedKeys(), [`${key} no_retry terminal`])
  await eventually(() => standby.parkedKeys().length === 1, {
    timeoutMs: 30_000,
    what: 'the standby lists it from the condition the leader wrote',
  })
  assert.deepEqual(standby.parkedKeys(), [`${key} no_retry terminal`])

  // Leader change: the first replica goes, the standby leads.
  await first.stop()
  standby.lead()
  // Restart in the middle of the parked state: a fresh replica, as after a crash.
  const restarted = await replica('restarted')
  assert.deepEqual(restarted.parkedKeys(), [`${key} no_retry terminal`], 'parked from its initial list')
  await new Promise((r) => setTimeout(r, 2000))
  assert.deepEqual(
    standby.reconciled.filter((k) => k === key),
    [],
    'the new leader does not retry a parked key',
  )

  // Replay as before: the annotation re-arms it on the leader (it parks again: the spec is still unusable).
  await apps.patch('bad', { metadata: { annotations: { [RETRY_NOW_ANNOTATION]: '1' } } }, 'merge')
  await eventually(() => standby.reconciled.includes(key), { timeoutMs: 30_000, what: 'replayed' })
  await eventually(() => standby.parkedKeys().length === 1, { timeoutMs: 30_000, what: 'parked again' })
  // A fixed spec: a new generation; the record is for the old one.
  await apps.patch('bad', { spec: { image: 'nginx:1.27' } }, 'merge')
  await appServiceWhere(
    apps,
    'bad',
    (a) => condition(a, 'Degraded')?.status === 'False' && a.status?.observedGeneration === 2,
    'reconciled after the fix',
  )
  await eventually(() => restarted.parkedKeys().length === 0 && standby.parkedKeys().length === 0, {
    timeoutMs: 30_000,
    what: 'no replica lists it any more',
  })
})
