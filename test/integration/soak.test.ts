/**
 * The chaos soak, short version (test/soak/soak.ts): two minutes of chaos with the fixed
 * seed — two leader-elected operator replicas and three node agents (the built artifact)
 * behind the fault proxy, a driver churning AppServices and NodeConfigs, every kind of
 * fault at least once — and every invariant must hold. About 3.5 minutes on a 2-core
 * machine, with the control plane taken exclusively (it compacts etcd and restarts the
 * apiserver). The long version is `npm run soak -- --minutes 30`, run by hand.
 */
import assert from 'node:assert/strict'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { writeReport } from '../soak/report.ts'
import { runSoak } from '../soak/soak.ts'
import { useTestEnv } from '../support/test-env.ts'

/** Chaos phase of the CI run. */
const MINUTES = 2
const SEED = 1

// Waiting for the exclusive lease (other files finishing) is not part of the soak's time.
useTestEnv({ exclusive: true })

test(`chaos soak: ${MINUTES} min, seed ${SEED}: every invariant holds`, { timeout: 290_000 }, async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'edgeop-soak-'))
  const report = await runSoak({ minutes: MINUTES, seed: SEED, logDir: join(out, 'logs') })
  await writeReport(report, out)
  const rss = report.processes
    .filter((p) => p.rss.assessed)
    .map((p) => (p.rss.assessed ? `${p.id} ${(p.rss.growth * 100).toFixed(1)} %` : ''))
  t.diagnostic(
    `faults ${JSON.stringify(report.faults.injected)}; requests/s p50 ${report.requests.window10s.p50.toFixed(1)} max ${report.requests.window10s.max.toFixed(1)}, quiet ${report.requests.quietPerS?.toFixed(2)}; convergence p99 ${report.convergence.latencyS.p99.toFixed(1)} s, settled in ${report.convergence.settleS?.toFixed(1)} s; RSS growth ${rss.join(', ')}; report ${out}`,
  )
  const failed = report.invariants.filter((i) => !i.passed)
  assert.deepEqual(
    failed.map(
      (i) => `${i.id}: ${i.checks} checks, ${i.failures} failures; ${i.messages.slice(0, 5).join(' | ')}`,
    ),
    [],
    `soak report in ${out}`,
  )
  assert.ok(report.passed)
})
