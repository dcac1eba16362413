/**
 * The AppService's parked record: what the failure reporter writes into `Degraded` when a key parks is
 * what `appServiceParkedRecord` reads back after a restart or on another replica.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FailureReport } from '../../../src/controller/index.ts'
import { ManualClock } from '../../../src/core/clock.ts'
import { noopLogger } from '../../../src/core/log.ts'
import type { AppService } from '../../../src/operators/appservice/api.ts'
import {
  appServiceFailureReporter,
  appServiceParkedRecord,
} from '../../../src/operators/appservice/failure-reporter.ts'

const app = (generation: number): AppService =>
  ({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'AppService',
    metadata: { namespace: 'shop', name: 'web', generation, resourceVersion: '1' },
    spec: { image: 'nginx:1.27', replicas: 1 },
  }) as AppService

async function report(r: FailureReport, current: AppService): Promise<AppService> {
  let written: AppService | undefined
  const clock = new ManualClock(Date.parse('2026-12-01T10:00:00Z'))
  const hook = appServiceFailureReporter({
    getAppService: () => current,
    appServices: () =>
      ({
        patch: async (_name: string, body: { status: AppService['status'] }) => {
          written = { ...current, status: body.status } as AppService
          return written
        },
      }) as never,
    recorder: { event: () => {} } as never,
    clock,
  })
  await hook({ namespace: 'shop', name: 'web' }, r, {
    signal: new AbortController().signal,
    log: noopLogger,
    reconcileId: 'r',
  })
  assert.ok(written, 'the status was written')
  return written
}

test('the park written into Degraded reads back as the same record, for the same generation only', async () => {
  const parked = await report(
    { errorClass: 'invalid', attempts: 1, message: '"spec.x: Invalid value"', parked: 'no_retry' },
    app(3),
  )
  assert.deepEqual(appServiceParkedRecord(parked), {
    reason: 'no_retry',
    attempts: 1,
    errorClass: 'invalid',
    lastError: '"spec.x: Invalid value"',
    parkedAt: Date.parse('2026-12-01T10:00:00Z'),
  })
  const edited = { ...parked, metadata: { ...parked.metadata, generation: 4 } }
  assert.equal(appServiceParkedRecord(edited), undefined, 'a new spec is not parked')
  const forbidden = await report(
    { errorClass: 'forbidden', attempts: 2, message: '"no"', missingPermission: 'Role …' },
    app(3),
  )
  assert.equal(appServiceParkedRecord(forbidden), undefined, 'a Forbidden condition is no park')
})

test('an unusable spec (Degraded InvalidConfiguration, the reconciler’s terminal error) reads back as parked for its generation', () => {
  const invalid = {
    ...app(2),
    status: {
      conditions: [
        {
          type: 'Degraded',
          status: 'True',
          reason: 'InvalidConfiguration',
          message: 'spec.image "X" is not a valid image reference',
          observedGeneration: 2,
          lastTransitionTime: '2026-12-01T10:00:00Z',
        },
      ],
    },
  } as AppService
  assert.deepEqual(appServiceParkedRecord(invalid), {
    reason: 'no_retry',
    errorClass: 'terminal',
    lastError: 'spec.image "X" is not a valid image reference',
    attempts: 1,
    parkedAt: Date.parse('2026-12-01T10:00:00Z'),
  })
})

test('a deletion whose finalizer keeps failing: Degraded FinalizerRetrying says how long it has waited, and is no park', async () => {
  const waiting = await report(
    { errorClass: 'transient', attempts: 9, message: '"database down"', finalizerWaitingMs: 1_800_000 },
    app(3),
  )
  const c = waiting.status?.conditions?.find((x) => x.type === 'Degraded')
  assert.deepEqual([c?.status, c?.reason], ['True', 'FinalizerRetrying'])
  assert.equal(
    c?.message,
    'deletion waiting 1800 s; the finalizer is retried every 300 s until it succeeds: "database down"',
  )
  assert.equal(appServiceParkedRecord(waiting), undefined)
})
