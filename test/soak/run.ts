/**
 * @module run — `npm run soak -- --minutes N [--seed S] [--out dir] [--rate R] [--sabotage kind] [--sharded [--replicas N]] [--link profile]`
 * (or `node test/soak/run.ts …`): the chaos soak (see soak.ts) with a report.
 *
 * Needs the built artifact (`npm run build`) and the control-plane binaries (as for the
 * integration tests). Takes the control plane exclusively: run it alone, or it waits for
 * the integration files using the same control plane. Writes `soak-report.{json,md}` and
 * `rss.svg` to `--out` (default `test/soak/reports/<date>/`) and exits 1 when an
 * invariant failed, 2 on a usage error.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { onTerminationSignal } from '../controlplane/cleanup.ts'
import { LINK_PROFILES } from '../support/link-shape.ts'
import { ARTIFACT } from '../support/operator-process.ts'
import { writeReport } from './report.ts'
import { DEFAULT_RATE, DEFAULT_SHARDED_REPLICAS, MIN_SHARDED_REPLICAS, type Sabotage } from './settings.ts'
import { runSoak } from './soak.ts'

const USAGE = `Usage: node test/soak/run.ts --minutes N [--seed S] [--out dir] [--rate ops/s] [--keep-logs] [--debug]
                         [--sabotage duplicate-db|fault-left-on] [--sharded [--replicas N]] [--snapshots]
                         [--link profile]

  --minutes   length of the chaos phase (≥ 1; setup, settling and teardown add 1–3 minutes)
  --seed      seed of the fault schedule and the driver (default 1)
  --out       report directory (default test/soak/reports/<date>)
  --rate      driver operations per second (default ${DEFAULT_RATE})
  --keep-logs write every process's log to <out>/logs even when the soak passes (always on failure)
  --debug     run the operator and the agents with --log-level=debug
  --sharded   run the operators with --shard (at debug level): a random replica is killed instead of
              the leader, replicas are added and removed, and single-owner replaces single-leader
  --replicas  operator replicas at the start (default 2; sharded ${DEFAULT_SHARDED_REPLICAS}, at least ${MIN_SHARDED_REPLICAS})
  --snapshots every operator and agent keeps cache snapshots (--cache-dir per slot, warm restarts), and
              no-action-before-synced checks that no operator starts its workers on a restored cache
              (--minutes ≥ 6: under load a cache's first snapshot is written after 5 minutes)
  --link      run the operators and agents over a slow link: ${Object.keys(LINK_PROFILES).join(', ')}
              (its RTT and bandwidth, on loopback; see docs/edge-networks.md)
  --sabotage  break something on purpose to see the soak fail:
              duplicate-db   the database stand-in re-creates entries on every PUT
              fault-left-on  a 503 on AppService status writes stays on after the chaos`

function usage(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`)
  process.exit(2)
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        minutes: { type: 'string' },
        seed: { type: 'string', default: '1' },
        out: { type: 'string' },
        rate: { type: 'string' },
        sabotage: { type: 'string' },
        'keep-logs': { type: 'boolean', default: false },
        debug: { type: 'boolean', default: false },
        sharded: { type: 'boolean', default: false },
        replicas: { type: 'string' },
        snapshots: { type: 'boolean', default: false },
        link: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    })
  } catch (err) {
    return usage((err as Error).message)
  }
})()
if (values.help) {
  process.stdout.write(`${USAGE}\n`)
  process.exit(0)
}
const minutes = Number(values.minutes)
if (values.minutes === undefined || !(minutes >= 1)) usage('--minutes: a number ≥ 1 is required')
const seed = Number(values.seed)
if (!Number.isInteger(seed)) usage('--seed: an integer is required')
const rate = values.rate === undefined ? undefined : Number(values.rate)
if (rate !== undefined && !(rate > 0 && rate <= 20)) usage('--rate: a number in (0, 20] is required')
const sabotage = values.sabotage as Sabotage | undefined
if (sabotage !== undefined && sabotage !== 'duplicate-db' && sabotage !== 'fault-left-on')
  usage(`--sabotage: unknown kind ${JSON.stringify(sabotage)}`)
const replicas = values.replicas === undefined ? undefined : Number(values.replicas)
if (
  replicas !== undefined &&
  !(values.sharded && Number.isInteger(replicas) && replicas >= MIN_SHARDED_REPLICAS)
)
  usage(`--replicas: an integer ≥ ${MIN_SHARDED_REPLICAS}, with --sharded, is required`)
// Under the soak's load a snapshot is first written after 5 min (SNAPSHOT_MIN_INTERVAL_MS): a shorter
// run restarts nothing warm, and no-action-before-synced would have nothing to judge.
if (values.snapshots && minutes < 6)
  usage('--snapshots: --minutes ≥ 6 is required (the first snapshot comes after 5)')
if (values.link !== undefined && !(values.link in LINK_PROFILES))
  usage(`--link: one of ${Object.keys(LINK_PROFILES).join(', ')} is required`)
if (!existsSync(ARTIFACT)) usage(`${ARTIFACT} is missing: run \`npm run build\` first`)

// Ctrl-C: exit, and the exit hook SIGKILLs every operator and agent process still running
// (the control plane stops by itself when this process goes).
onTerminationSignal(async () => {})

const out = values.out ?? join(import.meta.dirname, 'reports', new Date().toISOString().slice(0, 10))
const report = await runSoak({
  minutes,
  seed,
  logDir: join(out, 'logs'),
  keepLogs: values['keep-logs'],
  logLevel: values.debug ? 'debug' : 'info',
  ...(rate === undefined ? {} : { rate }),
  ...(sabotage ? { sabotage } : {}),
  ...(values.sharded ? { sharded: true } : {}),
  ...(replicas === undefined ? {} : { replicas }),
  ...(values.snapshots ? { snapshots: true } : {}),
  ...(values.link === undefined ? {} : { link: values.link }),
})
const files = await writeReport(report, out)
for (const i of report.invariants)
  process.stderr.write(`${i.passed ? 'pass' : 'FAIL'}  ${i.id}: ${i.checks} checks, ${i.failures} failures\n`)
process.stderr.write(`soak ${report.passed ? 'PASSED' : 'FAILED'}; report: ${files.join(', ')}\n`)
process.exit(report.passed ? 0 : 1)
