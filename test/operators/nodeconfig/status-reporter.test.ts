/** The agent's report writer against a scripted apply: what is sent, skipped, thrown and announced. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../../src/core/clock.ts'
import type { NodeConfig } from '../../../src/operators/nodeconfig/api.ts'
import type { NodeConfigReport } from '../../../src/operators/nodeconfig/report-api.ts'
import type { Report } from '../../../src/operators/nodeconfig/status.ts'
import { StatusReporter } from '../../../src/operators/nodeconfig/status-reporter.ts'
import { ApiError } from '../../../src/transport/api-error.ts'

const config = (name: string, rv = '1'): NodeConfig =>
  ({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name, uid: `uid-${name}`, generation: 1, resourceVersion: rv },
    spec: { files: [] },
  }) as NodeConfig

const apiError = (status: number, reason: string) =>
  new ApiError({ status, reason, message: '', method: 'PATCH', path: '/apis/x/status' })

function setup(answers: Record<string, Error | undefined> = {}) {
  const applied: string[] = []
  const events: string[] = []
  const clock = new ManualClock()
  const reporter = new StatusReporter({
    nodeName: 'edge-1',
    clock,
    reports: {
      apply: async (body: NodeConfigReport) => {
        applied.push(body.spec.nodeConfig)
        const err = answers[body.spec.nodeConfig]
        if (err) throw err
        return body
      },
      delete: async () => ({ kind: 'Status' }) as never,
    },
    listReports: () => [],
    recorder: {
      event: (o, type, reason, _a, note) => void events.push(`${o.metadata.name} ${type} ${reason} ${note}`),
    },
  })
  return { reporter, applied, events, clock }
}
const failed: Report = { state: 'Failed', message: 'bad path' }
const applied: Report = { state: 'Applied', message: '1 file in place' }
const signal = new AbortController().signal

test('a NodeConfig gone (404) or re-created (409) is skipped; other failures throw after every NodeConfig was tried', async () => {
  const t = setup({ gone: apiError(404, 'NotFound'), recreated: apiError(409, 'Conflict') })
  const all = [config('gone'), config('recreated'), config('ok')]
  const outcomes = new Map(all.map((c) => [c.metadata.uid!, applied]))
  await t.reporter.report(all, outcomes, signal)
  assert.deepEqual(t.applied, ['gone', 'recreated', 'ok'])

  const u = setup({ broken: apiError(500, 'InternalError') })
  const some = [config('broken'), config('ok')]
  await assert.rejects(
    u.reporter.report(some, new Map(some.map((c) => [c.metadata.uid!, applied])), signal),
    (err: ApiError) => err.status === 500,
  )
  assert.deepEqual(u.applied, ['broken', 'ok'], 'the failure did not stop the next NodeConfig')
})

test('a Failed entry written is a Warning event; an entry not written is not announced', async () => {
  const t = setup({ lost: apiError(500, 'InternalError') })
  const all = [config('a'), config('lost')]
  const outcomes = new Map(all.map((c) => [c.metadata.uid!, failed]))
  await assert.rejects(t.reporter.report(all, outcomes, signal))
  assert.deepEqual(t.events, ['a Warning ApplyFailed edge-1: bad path'])
})

test('the same entry is not re-sent while the cache has not shown it, then is', async () => {
  const t = setup()
  const outcomes = new Map([['uid-a', applied]])
  await t.reporter.report([config('a', '1')], outcomes, signal)
  await t.reporter.report([config('a', '1')], outcomes, signal)
  await t.reporter.report([config('a', '2')], outcomes, signal)
  assert.equal(t.applied.length, 1, 'same or moved resourceVersion within the wait: not re-sent')
  await t.clock.advance(10_000)
  await t.reporter.report([config('a', '3')], outcomes, signal)
  assert.equal(t.applied.length, 2, 'still not shown after the wait: sent again')
  await t.reporter.report([config('a', '3')], new Map([['uid-a', failed]]), signal)
  assert.equal(t.applied.length, 3, 'a different entry goes at once')
})
