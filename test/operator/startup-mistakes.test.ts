/**
 * A user's operator started with each start-up mistake a user can make, as its own process: exit 2,
 * one line saying what is wrong (the only other line is the `starting` one), no stack, no unhandled
 * rejection. None of them reaches a cluster; a missing CRD, which needs one, is in
 * test/integration/startup.test.ts.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { unaskedKubeconfig } from '../support/unasked-cluster.ts'

const FIXTURE = path.join(import.meta.dirname, 'fixtures/mistaken-operator.ts')
const tmp = mkdtempSync(path.join(tmpdir(), 'edgeop-startup-mistakes-'))
after(() => rmSync(tmp, { recursive: true, force: true }))
/** A cluster no case reaches: each fails before the first request. */
const kubeconfig = unaskedKubeconfig()
const garbage = path.join(tmp, 'garbage')
writeFileSync(garbage, 'clusters: [\n  {{{ not yaml')

/** Runs the fixture with `mistake` and `argv`; its exit code and stderr lines. */
function run(mistake: string, argv: string[]): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(process.execPath, [FIXTURE, ...argv], {
    env: { PATH: process.env.PATH, MISTAKE: mistake },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, lines: stderr.split('\n').filter(Boolean) })),
  )
}

const quiet = [`--kubeconfig=${kubeconfig}`, '--metrics-bind-address=0', '--health-probe-bind-address=0']
const cases: [string, string, string[], RegExp][] = [
  [
    'a controller added twice',
    'duplicate',
    quiet,
    /^secretsync cannot start: controller "secretsync" is added twice: add it once/,
  ],
  [
    'a flag with a bad value',
    'none',
    [...quiet, '--qps=fast'],
    /^secretsync: --qps: expected a number, got "fast"$/,
  ],
  ['an unknown flag', 'none', [...quiet, '--shard'], /^secretsync: unknown flag --shard$/],
  [
    'a kubeconfig that does not exist',
    'none',
    ['--kubeconfig=/nonexistent/kubeconfig'],
    /^secretsync cannot start: .*\/nonexistent\/kubeconfig/,
  ],
  [
    'a kubeconfig that is not YAML',
    'none',
    [`--kubeconfig=${garbage}`],
    /^secretsync cannot start: .*garbage/,
  ],
  [
    'a controllers function that throws',
    'throws',
    quiet,
    /^secretsync cannot start: SYNC_SOURCE is not set$/,
  ],
  [
    'a controllers function that returns nothing',
    'not-iterable',
    quiet,
    /^secretsync cannot start: .*iterable/,
  ],
  [
    'an informer over several --namespace',
    'several-namespaces',
    [...quiet, '--namespace=a', '--namespace=b'],
    /^secretsync cannot start: secrets: --namespace names several: use multiNamespaceInformer\(spec\)$/,
  ],
]

for (const [title, mistake, argv, line] of cases) {
  test(`start-up mistake, ${title}: exit 2, one line saying what is wrong, no unhandled rejection`, async () => {
    const r = await run(mistake, argv)
    assert.equal(r.code, 2, r.lines.join('\n'))
    // The operator logs JSON; the command line's own refusals are plain `<name>: …` lines.
    const said = r.lines.map((l) =>
      l.startsWith('{') ? (JSON.parse(l) as { level: string; msg: string }) : { level: 'error', msg: l },
    )
    const errors = said.filter((l) => l.level === 'error')
    assert.equal(errors.length, 1, r.lines.join('\n'))
    assert.match(errors[0]!.msg, line)
    assert.deepEqual(
      said.filter((l) => l.level !== 'error').map((l) => l.msg),
      errors[0]!.msg.startsWith('secretsync cannot start') && !/kubeconfig|garbage/.test(errors[0]!.msg)
        ? ['starting secretsync']
        : [],
      'no other line',
    )
  })
}
