/**
 * Leader election on the real kube-apiserver, with three candidates in separate processes
 * (fixtures/leader-candidate.ts), each printing wall-clock-stamped events. Short timings keep it fast:
 * lease 3 s, renew deadline 2 s, retry 0.5 s (jitter 1.2).
 *
 * Failover bounds used below (derived, not guessed). After the leader's last committed write at T:
 * a follower sees that change at its next attempt, at most one jittered retry later
 * (r·(1+J) = 1.1 s); it may take over once it has seen no change for D = 3 s, at its first attempt
 * after that, at most another r·(1+J) later. So a SIGKILL failover is at most D + 2·r·(1+J) = 5.2 s
 * after the kill, plus scheduling noise; with two followers it is typically well under that. A
 * graceful stop releases the lease, which a follower takes at its next attempt: ≤ r·(1+J) = 1.1 s
 * plus the release round trip.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { Lease } from '../../src/core/types.ts'
import type { FaultAction, FaultProxy } from '../controlplane/fault-proxy.ts'
import { adminClient } from '../support/kube.ts'
import { seededRandom } from '../support/random.ts'
import { useTestEnv } from '../support/test-env.ts'
import {
  assertNoOverlap,
  type CandidateOptions,
  type CandidateProcess,
  Election,
} from './fixtures/leader-harness.ts'

const TIMING = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 }
const JITTER = 1.2
const JITTERED_RETRY = TIMING.retryPeriodMs * (1 + JITTER)
const LEASE = 'edgeop-leader'
/** Process scheduling and apiserver round trips on a loaded 2-core CI machine. */
const TOLERANCE_MS = 1000

const { env, defer } = useTestEnv()

function election(): Election {
  const e = new Election()
  defer(() => e.stopAll(2000))
  return e
}

function options(
  namespace: string,
  kubeconfig: string,
  identity: string,
  releaseOnCancel = true,
): CandidateOptions {
  return { kubeconfig, namespace, name: LEASE, identity, releaseOnCancel, ...TIMING }
}

async function readLease(namespace: string): Promise<Lease> {
  const client = adminClient(env(), env().server)
  try {
    return await client.resource<Lease>(CORE_TYPES.leases, namespace).get(LEASE)
  } finally {
    await client.close()
  }
}

async function proxied(): Promise<{ proxy: FaultProxy; kubeconfig: string }> {
  const proxy = await env().startFaultProxy()
  defer(() => proxy.close())
  return { proxy, kubeconfig: await env().writeKubeconfig({ server: proxy.url }) }
}

/** Waits until some candidate is inside runWhileLeading and has been for `settleMs` (followers have seen it renew). */
async function steadyLeader(e: Election, settleMs = 1200): Promise<CandidateProcess> {
  const leader = await e.until(() => e.leader(), 20_000, 'a leader')
  await sleep(settleMs)
  assert.equal(e.leader(), leader, 'the leader stayed the leader')
  return leader
}

function noErrors(e: Election): void {
  const errors = e.all.filter((l) => l.ev === 'error')
  assert.deepEqual(errors, [], e.describe())
}

const measured: Record<string, number[]> = { kill: [], term: [], partition: [] }

test('SIGKILL the leader: exactly one new leader, within leaseDuration + 2 × retry × (1 + jitter)', async (t) => {
  const ns = await env().createNamespace('leader-kill')
  const e = election()
  for (const id of ['kill-a', 'kill-b', 'kill-c']) e.spawn(options(ns, env().kubeconfig, id))
  const old = await steadyLeader(e)
  const killedAt = old.kill('SIGKILL')
  await old.exited
  const next = await e.waitFor((l) => l.ev === 'acquired' && l.t > killedAt, 15_000, 'a new leader')
  const failover = next.t - killedAt
  measured.kill!.push(failover)
  t.diagnostic(`SIGKILL failover: ${failover} ms`)
  // No second takeover follows (wait longer than a lease duration).
  await sleep(TIMING.leaseDurationMs + 500)
  const takeovers = e.all.filter((l) => l.ev === 'acquired' && l.t > killedAt)
  assert.deepEqual(
    takeovers.map((l) => l.id),
    [next.id],
    e.describe(),
  )
  assert.equal(e.leader()?.id, next.id)
  const lease = await readLease(ns)
  assert.equal(lease.spec?.holderIdentity, next.id)
  assert.equal(lease.spec?.leaseTransitions, 1, 'created by the first leader (0), taken over once')
  // The follower waited out the lease: at least D after the last renewal, which was ≤ retry + a round trip before the kill.
  assert.ok(failover >= TIMING.leaseDurationMs - TIMING.retryPeriodMs - 200, `${failover} ms is too early`)
  const bound = TIMING.leaseDurationMs + 2 * JITTERED_RETRY + TOLERANCE_MS
  assert.ok(failover <= bound, `failover ${failover} ms > ${bound} ms`)
  assertNoOverlap(e.intervals())
  noErrors(e)
})

test('SIGTERM the leader: it stops, releases, and a follower takes over within about one retry period', async (t) => {
  const ns = await env().createNamespace('leader-term')
  const e = election()
  for (const id of ['term-a', 'term-b', 'term-c']) e.spawn(options(ns, env().kubeconfig, id))
  const old = await steadyLeader(e)
  const transitions = (await readLease(ns)).spec?.leaseTransitions ?? 0
  const termAt = old.kill('SIGTERM')
  const exit = await old.exited
  assert.equal(exit.code, 0, old.stderr.join('\n'))
  const next = await e.waitFor((l) => l.ev === 'inside-start' && l.id !== old.id, 10_000, 'a new leader')
  const failover = next.t - termAt
  measured.term!.push(failover)
  t.diagnostic(`SIGTERM (release) failover: ${failover} ms`)
  const end = old.lines.find((l) => l.ev === 'inside-end')!
  assert.equal(end.reason, 'EDGEOP_ERR_ABORTED')
  assert.ok(end.t < next.t, 'the old leader left before the new one entered')
  assert.ok(old.lines.some((l) => l.ev === 'stopped'))
  assert.ok(
    old.stderr.some((s) => s.includes('released the lease')),
    `the old leader released the lease\n${old.stderr.join('\n')}`,
  )
  const bound = JITTERED_RETRY + TOLERANCE_MS
  assert.ok(failover <= bound, `failover ${failover} ms > ${bound} ms`)
  const lease = await readLease(ns)
  assert.equal(lease.spec?.holderIdentity, next.id)
  assert.equal(
    lease.spec?.leaseTransitions,
    transitions + 1,
    'the release kept the count; the takeover added one',
  )
  assertNoOverlap(e.intervals())
  noErrors(e)
})

const PARTITIONS: [string, FaultAction][] = [
  ['stall', { type: 'stall' }],
  ['503', { type: 'status', status: 503 }],
  ['drop', { type: 'drop', scope: 'connection' }],
]

for (const [name, action] of PARTITIONS) {
  test(`a leader partitioned from the apiserver (${name}) stops before a new leader is elected`, async (t) => {
    const ns = await env().createNamespace(`leader-part-${name}`)
    const { proxy, kubeconfig } = await proxied()
    const e = election()
    const cut = e.spawn(options(ns, kubeconfig, `part-${name}-a`))
    await e.waitFor(
      (l) => l.id === cut.id && l.ev === 'inside-start',
      20_000,
      'the proxied candidate to lead',
    )
    for (const id of ['b', 'c']) e.spawn(options(ns, env().kubeconfig, `part-${name}-${id}`))
    await e.until(
      () =>
        e.all.filter((l) => l.ev === 'new-leader' && l.leader === cut.id && l.id !== cut.id).length === 2 ||
        undefined,
      20_000,
      'both followers to see the leader',
    )
    await sleep(1000)
    const partitionedAt = Date.now()
    proxy.addFault({ action })
    const end = await e.waitFor(
      (l) => l.id === cut.id && l.ev === 'inside-end',
      10_000,
      'the old leader to stop',
    )
    const next = await e.waitFor((l) => l.ev === 'inside-start' && l.id !== cut.id, 15_000, 'a new leader')
    const exit = await cut.exited
    t.diagnostic(
      `${name}: old leader stopped ${end.t - partitionedAt} ms after the partition; ` +
        `new leader entered ${next.t - partitionedAt} ms after it (margin ${next.t - end.t} ms)`,
    )
    measured.partition!.push(next.t - partitionedAt)
    assert.equal(end.reason, 'EDGEOP_ERR_LEADER')
    assert.ok(end.t < next.t, `old leader left at ${end.t}, new one entered at ${next.t}\n${e.describe()}`)
    // It stops at most renewDeadline after the start of its last successful renewal (≤ the partition).
    assert.ok(end.t - partitionedAt <= TIMING.renewDeadlineMs + 300, `${end.t - partitionedAt} ms`)
    assert.equal(exit.code, 1, 'a lost leader exits non-zero')
    assert.ok(cut.lines.some((l) => l.ev === 'lost'))
    // After the partition the old leader wrote nothing: every request it made got the fault.
    const after = proxy.requests((r) => r.startedAt > partitionedAt + 50)
    assert.ok(after.length > 0)
    assert.ok(
      after.every((r) => r.fault !== undefined),
      'no request reached the apiserver',
    )
    assert.equal((await readLease(ns)).spec?.holderIdentity, next.id)
    assertNoOverlap(e.intervals())
    noErrors(e)
  })
}

test('never two processes inside runWhileLeading at once, over randomized kill / term / partition rounds', async (t) => {
  const seed = Number(process.env.LEADER_CHAOS_SEED ?? Date.now() % 1_000_000)
  t.diagnostic(`seed ${seed} (replay with LEADER_CHAOS_SEED=${seed})`)
  const random = seededRandom(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!
  const ns = await env().createNamespace('leader-chaos')
  const slots = await Promise.all([0, 1, 2].map(() => proxied()))
  const e = election()
  let generation = 0
  const bySlot = slots.map((s, i) => e.spawn(options(ns, s.kubeconfig, `s${i}-g${generation}`)))
  const budgetEnd = Date.now() + 40_000
  const log: string[] = []
  let rounds = 0
  while (rounds < 14 && Date.now() < budgetEnd - 7_000) {
    rounds++
    const leader = await e.until(() => e.leader(), 20_000, 'a leader')
    const slot = bySlot.indexOf(leader)
    await sleep(random() * 1000)
    const what = pick(['kill', 'term', 'partition'] as const)
    let at: number
    if (what === 'partition') {
      const [, action] = pick(PARTITIONS)
      at = Date.now()
      slots[slot]!.proxy.addFault({ action })
      log.push(`${rounds}: partition ${leader.id} (${action.type})`)
    } else {
      at = leader.kill(what === 'kill' ? 'SIGKILL' : 'SIGTERM')
      log.push(`${rounds}: ${what} ${leader.id}`)
    }
    // Every wait also fails as soon as two processes are inside at once.
    const next = await e.waitFor(
      (l) => l.ev === 'inside-start' && l.id !== leader.id && l.t > at,
      15_000,
      'a new leader',
    )
    measured[what]!.push(next.t - at)
    log.push(`   → ${next.id} after ${next.t - at} ms`)
    // Restore the slot with a fresh process (a partitioned leader exits by itself once it has lost).
    await e
      .until(() => leader.exit, 10_000, `${leader.id} to exit`)
      .catch((err: Error) => {
        // Seen once (CI, seed 477154, a SIGTERMed leader that neither released nor exited): keep its own log.
        throw new Error(`${err.message}\n${leader.id} stderr:\n${leader.stderr.join('\n')}`)
      })
    slots[slot]!.proxy.clearFaults()
    slots[slot]!.proxy.dropAll()
    bySlot[slot] = e.spawn(options(ns, slots[slot]!.kubeconfig, `s${slot}-g${++generation}`))
  }
  await e.stopAll()
  t.diagnostic(log.join('\n'))
  const intervals = e.intervals()
  const gap = assertNoOverlap(intervals)
  t.diagnostic(`${rounds} rounds, ${intervals.length} leadership intervals, smallest hand-over gap ${gap} ms`)
  assert.ok(rounds >= 8, `only ${rounds} rounds fitted in the budget`)
  assert.ok(intervals.length >= rounds + 1)
  noErrors(e)
  for (const c of e.candidates) {
    if (c.exit?.signal === 'SIGKILL') continue
    // Respawned just before the end: SIGTERM arrived before it had installed its handler.
    if (c.exit?.signal === 'SIGTERM' && !c.lines.some((l) => l.ev === 'ready')) continue
    assert.ok(
      c.exit?.code === 0 || c.exit?.code === 1,
      `${c.id} exited ${c.exit?.code}\n${c.stderr.join('\n')}`,
    )
  }
})

test('failover times (summary)', (t) => {
  const fmt = (xs: number[]) => {
    if (xs.length === 0) return 'none'
    const s = [...xs].sort((a, b) => a - b)
    return `n=${s.length} min ${s[0]} median ${s[Math.floor(s.length / 2)]} max ${s.at(-1)} ms`
  }
  for (const [k, xs] of Object.entries(measured)) t.diagnostic(`${k}: ${fmt(xs)}`)
})
