/**
 * The dashboard and the alerts against real data: the built operator (dist/edgeop.cjs, leader
 * elected, metrics over plain HTTP: `--metrics-secure=false`) reconciles AppServices on the test
 * control plane, and a real Prometheus (built from the Go module proxy) scrapes it every second
 * and evaluates config/monitoring's rule file. The test makes things happen — a Deployment edited
 * behind the operator's back (drift), an unusable spec (a parked key), the database service down
 * (errors, the breaker opens, a deletion waits on its finalizer) — then asks Prometheus, through
 * its HTTP API, for every query of every dashboard panel and for every alert's expression up to
 * its comparison (`<query> > <threshold>`): each must return data. The alerts the test forces
 * (a key parked, the breaker open) must also hold with their threshold, and Prometheus must
 * report them pending or firing. Finally it draws the dashboard as SVG from Prometheus's answers
 * (build/dashboard-svg.ts); with EDGEOP_DASHBOARD_SVG=1 it writes docs/dashboard.svg, after
 * EDGEOP_DASHBOARD_SVG_SECONDS more seconds of traffic (default 0).
 */
import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { parse } from 'yaml'
import { ROOT } from '../../build/artifact.ts'
import { concreteQuery, dashboardPanels, dashboardSvgFrom } from '../../build/dashboard-svg.ts'
import { MONITORING_DIR, RULES_FILE } from '../../build/monitoring.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { FINALIZER } from '../../src/operators/appservice/reconcile.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { type DatabaseStandin, startDatabaseStandin } from '../standin/database-api.ts'
import { appServiceWhere, installAppServiceCrd } from '../support/appservice.ts'
import { adminClient } from '../support/kube.ts'
import { type OperatorProcess, startOperator } from '../support/operator-process.ts'
import { type PrometheusServer, startPrometheus } from '../support/prometheus.ts'
import { useTestEnv } from '../support/test-env.ts'

/** How long every query gets to return data: rates need two scrapes, histograms a reconcile. */
const DATA_TIMEOUT_MS = 120_000
const RULES = join(ROOT, MONITORING_DIR, RULES_FILE)

const { env, setup, defer } = useTestEnv()
let admin: KubeClient
let db: DatabaseStandin
let ns: string
let op: OperatorProcess
let prometheus: PrometheusServer

type Rule = { alert: string; expr: string }
const alertRules = async (): Promise<Rule[]> =>
  (parse(await readFile(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules)

/** An alert's expression up to its comparison: what must return data even when all is well. */
function inner(expr: string): string {
  const m = /^(.*) [<>] \S+$/s.exec(expr)
  if (!m) throw new Error(`alert expression does not end in "> n" or "< n": ${expr}`)
  return m[1]!
}

const app = (name: string, spec: AppService['spec']): AppService =>
  ({
    apiVersion: `${APPSERVICES.group}/${APPSERVICES.version}`,
    kind: 'AppService',
    metadata: { name },
    spec,
  }) as AppService

setup(async () => {
  await env().startControllers()
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  await installAppServiceCrd(admin)
  ns = await env().createNamespace('monitoring')
  db = await startDatabaseStandin()
  defer(() => db.close())
  op = await startOperator('monitored', [
    'run',
    `--kubeconfig=${env().kubeconfig}`,
    `--namespace=${ns}`,
    `--database-api=${db.url}`,
    '--leader-elect',
    '--leader-election-id=edgeop-monitoring',
    `--leader-election-namespace=${ns}`,
  ])
  defer(() => op.kill('SIGKILL'))
  await op.waitForLog((l) => l.msg === 'caches synced')
  prometheus = await startPrometheus(
    [{ address: new URL(op.metricsUrl).host, pod: 'edgeop-monitored' }],
    [RULES],
  )
  defer(() => prometheus.close())
  // Scraping before anything happens, so every counter is seen from its start (Prometheus applies
  // its first targets a few seconds after it is ready).
  await eventually(async () => (await prometheus.query('up == 1')).length > 0, {
    timeoutMs: 60_000,
    what: 'operator scraped',
  })
  // Work for every panel: reconciles, children, database calls.
  const apps = admin.resource(APPSERVICES, ns)
  for (const [name, spec] of [
    ['web', { image: 'nginx:1.27', replicas: 2, database: { enabled: true, class: 'standard' } }],
    ['api', { image: 'nginx:1.27', replicas: 1 }],
    ['doomed', { image: 'nginx:1.27', replicas: 1, database: { enabled: true, class: 'standard' } }],
    ['bad', { image: 'Not An Image', replicas: 1 }],
  ] as const)
    await apps.create(app(name, spec as AppService['spec']))
  await appServiceWhere(
    apps,
    'doomed',
    (a) => a.metadata.finalizers?.includes(FINALIZER) ?? false,
    'finalizer on doomed',
  )
  // Drift: a Deployment scaled behind the operator's back is re-applied.
  const deployments = admin.resource(CORE_TYPES.deployments, ns)
  await eventually(async () => (await deployments.get('api').catch(() => undefined)) !== undefined, {
    timeoutMs: 60_000,
    what: 'api Deployment',
  })
  await deployments.patch('api', { spec: { replicas: 5 } }, 'merge')
  await eventually(async () => ((await op.metric('edgeop_controller_drift_corrected_total')) ?? 0) >= 1, {
    timeoutMs: 60_000,
    what: 'drift corrected',
  })
  // The database goes down: the deletion of doomed fails until the breaker opens, its finalizer held.
  db.down = true
  await apps.delete('doomed')
  defer(() => {
    db.down = false
  })
})

test('every dashboard query and every alert expression returns data from Prometheus scraping the operator', async () => {
  const queries = new Map<string, string>()
  for (const p of dashboardPanels())
    for (const t of p.targets) queries.set(concreteQuery(t.expr), `panel "${p.title}"`)
  const rules = await alertRules()
  for (const r of rules) queries.set(inner(r.expr), `alert ${r.alert}`)
  const pending = new Map(queries)
  await eventually(
    async () => {
      for (const [q] of pending) if ((await prometheus.query(q)).length > 0) pending.delete(q)
      return pending.size === 0
    },
    { timeoutMs: DATA_TIMEOUT_MS, what: 'data for every query' },
  ).catch((err: Error) => {
    throw new Error(
      `${err.message}; no data for:\n${[...pending].map(([q, w]) => `  ${w}: ${q}`).join('\n')}`,
    )
  })
  assert.ok(queries.size >= 25, `${queries.size} distinct queries`)
})

test('the forced alerts hold with their thresholds and are pending or firing in Prometheus', async () => {
  const rules = new Map((await alertRules()).map((r) => [r.alert, r.expr]))
  for (const alert of ['EdgeopKeyParked', 'EdgeopCircuitBreakerOpen']) {
    await eventually(async () => (await prometheus.query(rules.get(alert)!)).length > 0, {
      timeoutMs: DATA_TIMEOUT_MS,
      what: `${alert}'s expression true`,
    })
    await eventually(async () => (await prometheus.query(`ALERTS{alertname="${alert}"}`)).length > 0, {
      timeoutMs: DATA_TIMEOUT_MS,
      what: `${alert} pending or firing`,
    })
  }
  const [parked] = await prometheus.query(rules.get('EdgeopKeyParked')!)
  assert.deepEqual([parked?.metric.controller, parked?.metric.reason], ['appservice', 'no_retry'])
  const [terminating] = await prometheus.query(inner(rules.get('EdgeopObjectsStuckTerminating')!))
  assert.ok(Number(terminating?.value[1]) > 0, 'the held deletion has an age')
})

test('the dashboard drawn from Prometheus has data in every panel', async () => {
  const extra = Number(process.env.EDGEOP_DASHBOARD_SVG_SECONDS ?? 0)
  if (extra > 0) {
    // Traffic for the picture: the database comes back and goes again, objects come and go.
    const apps = admin.resource(APPSERVICES, ns)
    for (let i = 0; i * 20 < extra; i++) {
      db.down = i % 3 === 2
      await apps.create(
        app(`burst-${i}`, {
          image: 'nginx:1.27',
          replicas: 1,
          database: i % 2 === 0 ? { enabled: true, class: 'standard' } : { enabled: false },
        } as AppService['spec']),
      )
      if (i > 2) await apps.delete(`burst-${i - 3}`).catch(() => {})
      await sleep(20_000)
    }
  }
  const svg = await dashboardSvgFrom(prometheus.url, Math.max(3, Math.ceil(extra / 60) + 3))
  for (const p of dashboardPanels())
    assert.ok(svg.includes(`>${p.title.replaceAll('&', '&#38;')}</text>`), p.title)
  assert.ok(!svg.includes('No data'), 'a panel without data')
  if (process.env.EDGEOP_DASHBOARD_SVG === '1') await writeFile(join(ROOT, 'docs/dashboard.svg'), svg)
})
