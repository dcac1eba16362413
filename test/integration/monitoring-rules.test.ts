/**
 * config/monitoring's alerts under a real promtool (built from the Go module proxy by
 * build/tools/build-go-tool.sh; a missing promtool fails here, it is never skipped): the rule file
 * passes `promtool check rules`, its unit tests pass `promtool test rules`, every alert has a unit
 * test, and each unit test can fail: with any one alert's threshold moved out of reach, the tests
 * fail for that alert.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { copyFile, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { ROOT } from '../../build/artifact.ts'
import { MONITORING_DIR, RULES_FILE, RULES_TEST_FILE } from '../../build/monitoring.ts'
import { goToolPathAsync } from '../../build/tools/go-tools.ts'
import { scratchDirs } from '../support/scratch.ts'

const run = promisify(execFile)
const dir = join(ROOT, MONITORING_DIR)
const tempDir = scratchDirs('edgeop-rules-')
type Rule = { alert: string; expr: string }
const rules = async (): Promise<Rule[]> =>
  (parse(await readFile(join(dir, RULES_FILE), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
    (g) => g.rules,
  )

/** promtool's exit code and output for `args`, run in `cwd`. */
async function promtool(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  const bin = await goToolPathAsync('promtool')
  try {
    const { stdout, stderr } = await run(bin, args, { cwd })
    return { code: 0, out: stdout + stderr }
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string }
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
}

test('promtool check rules accepts the rule file', async () => {
  const r = await promtool(['check', 'rules', RULES_FILE], dir)
  assert.equal(r.code, 0, r.out)
  assert.match(r.out, new RegExp(`SUCCESS: ${(await rules()).length} rules found`))
})

test('promtool test rules passes, and every alert has a unit test', async () => {
  const r = await promtool(['test', 'rules', RULES_TEST_FILE], dir)
  assert.equal(r.code, 0, r.out)
  const tested = new Set(
    (
      parse(await readFile(join(dir, RULES_TEST_FILE), 'utf8')) as {
        tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[]
      }
    ).tests.flatMap((t) =>
      (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname),
    ),
  )
  assert.deepEqual(
    (await rules()).map((r) => r.alert).filter((a) => !tested.has(a)),
    [],
    'alerts no unit test expects to fire',
  )
})

test('each alert unit test can fail: an unreachable threshold makes that alert expected but absent', async () => {
  const text = await readFile(join(dir, RULES_FILE), 'utf8')
  const work = await tempDir()
  await copyFile(join(dir, RULES_TEST_FILE), join(work, RULES_TEST_FILE))
  for (const { alert, expr } of await rules()) {
    const m = /^(.*) ([<>]) (\S+)$/s.exec(expr)
    assert.ok(m, `${alert}: the expression ends in "< n" or "> n"`)
    const unreachable = `${m[1]} ${m[2]} ${m[2] === '>' ? '1e300' : '-1e300'}`
    assert.ok(text.includes(`expr: ${expr}\n`), `${alert}: expression found verbatim`)
    await writeFile(join(work, RULES_FILE), text.replace(`expr: ${expr}\n`, `expr: ${unreachable}\n`))
    const r = await promtool(['test', 'rules', RULES_TEST_FILE], work)
    assert.equal(r.code, 1, `${alert}: the tests still pass with the alert unable to fire\n${r.out}`)
    assert.match(r.out, new RegExp(`alertname: ${alert}, time`), r.out)
  }
})
