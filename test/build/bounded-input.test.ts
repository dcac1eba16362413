/**
 * Hostile and careless input through the built artifact (dist/edgeop.cjs, `npm run build` first):
 * each is one line of error and an exit code, never a crash, a hang or a plugin left running.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { promisify } from 'node:util'
import { processesMarkedBy } from '../support/process-tree.ts'

const ARTIFACT = path.join(import.meta.dirname, '../../dist/edgeop.cjs')
const MARK = 'EDGEOP_TEST_BOUNDED_INPUT'
const dir = mkdtempSync(path.join(tmpdir(), 'edgeop-bounded-input-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** Runs the artifact; its exit code and stderr lines (a failure is expected). */
async function edgeop(...args: string[]): Promise<{ code: number; stderr: string[] }> {
  assert.ok(existsSync(ARTIFACT), 'dist/edgeop.cjs is missing: run `npm run build` first (npm test does)')
  const r = await promisify(execFile)(process.execPath, [ARTIFACT, ...args]).then(
    () => assert.fail('expected a failure'),
    (e: { code: number; stderr: string }) => e,
  )
  return { code: r.code, stderr: r.stderr.trimEnd().split('\n') }
}

/** A kubeconfig whose user runs `sh -c <script>` as its exec plugin, with this test's mark in its environment. */
function execKubeconfig(name: string, script: string): string {
  const file = path.join(dir, `${name}.yaml`)
  writeFileSync(
    file,
    `clusters:\n- name: s\n  cluster: {server: "http://127.0.0.1:9"}\ncontexts:\n- name: s\n  context: {cluster: s, user: u}\n` +
      `users:\n- name: u\n  user:\n    exec:\n      command: /bin/sh\n      args: ["-c", ${JSON.stringify(script)}]\n` +
      `      env: [{name: ${MARK}, value: ${name}}]\n      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Never\n` +
      'current-context: s\n',
  )
  return file
}

test('D4: check --kubeconfig=/dev/zero is refused in one line naming the file and the 8 MiB limit', async () => {
  assert.deepEqual(await edgeop('check', '--kubeconfig=/dev/zero'), {
    code: 1,
    stderr: [
      'edgeop: kubeconfig /dev/zero is larger than the 8 MiB edgeop reads; a kubeconfig is normally a few KiB: is this the right file?',
    ],
  })
})

test('D7: check with a billion-laughs kubeconfig is refused in one line at the alias past the cap', async () => {
  const lines = ['l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]']
  for (let i = 1; i < 10; i++)
    lines.push(
      `l${i}: &l${i} [${Array(9)
        .fill(`*l${i - 1}`)
        .join(', ')}]`,
    )
  const file = path.join(dir, 'laughs.yaml')
  writeFileSync(file, `${lines.join('\n')}\n`)
  assert.deepEqual(await edgeop('check', `--kubeconfig=${file}`), {
    code: 1,
    stderr: [
      `edgeop: ${file}:6:10: aliases expand to more than 100000 nodes (edgeop's limit for one document; exponentially nested aliases?)`,
    ],
  })
})

test('D13: --shard with a ring name over 63 characters exits 2 at flag parse, naming the flag and the limit', async () => {
  assert.deepEqual(await edgeop('check', '--shard', `--leader-election-id=${'r'.repeat(64)}`), {
    code: 2,
    stderr: [
      "edgeop: --leader-election-id: with --shard, the ring's name must be at most 63 characters (it is the name part of the label shard.edgeop.io/<ring>), got 64",
    ],
  })
})

test('D5: an exec plugin printing without end is stopped at 1 MiB; check reports it and exits 1', async () => {
  const { code, stderr } = await promisify(execFile)(process.execPath, [
    ARTIFACT,
    'check',
    `--kubeconfig=${execKubeconfig('loud', 'exec yes loud')}`,
  ]).then(
    () => assert.fail('expected a failure'),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stderr: e.stdout + e.stderr }),
  )
  assert.equal(code, 1)
  assert.match(
    stderr,
    /exec plugin "\/bin\/sh" \(user "u"\) printed more than 1 MiB on stdout \(edgeop's limit for an ExecCredential\); it was stopped/,
  )
  assert.doesNotMatch(stderr, /ERR_STRING_TOO_LONG|RangeError/)
  assert.deepEqual(processesMarkedBy(MARK, 'loud'), [])
})

test('D6: a hanging exec plugin does not outlive edgeop stopped by SIGTERM', async () => {
  const pid = path.join(dir, 'hung.pid')
  const child = spawn(
    process.execPath,
    [ARTIFACT, 'check', `--kubeconfig=${execKubeconfig('hung', `echo $$ > ${pid}; sleep 1000`)}`],
    { stdio: 'ignore' },
  )
  for (let i = 0; processesMarkedBy(MARK, 'hung').length === 0 || !existsSync(pid); i++) {
    if (i === 2_000) assert.fail('the plugin did not start')
    await new Promise((r) => setTimeout(r, 5))
  }
  const exited = new Promise<string | null>((resolve) => child.on('exit', (_, signal) => resolve(signal)))
  child.kill('SIGTERM')
  assert.equal(await exited, 'SIGTERM')
  for (let i = 0; processesMarkedBy(MARK, 'hung').length > 0; i++) {
    if (i === 2_000) assert.fail(`still running: ${JSON.stringify(processesMarkedBy(MARK, 'hung'))}`)
    await new Promise((r) => setTimeout(r, 5))
  }
})
