/**
 * The default exec runner against real processes (small shell scripts): a plugin is stopped past its
 * stdout cap and past its time, with whatever it started, runs again on the next request, and never
 * outlives edgeop. Timeouts are injected small; nothing asserts on elapsed time.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { ExecCredentialProvider } from '../../src/config/exec-credentials.ts'
import { MAX_EXEC_PLUGIN_STDOUT_BYTES, spawnExecPlugin } from '../../src/config/exec-plugin-runner.ts'
import { processesMarkedBy } from '../support/process-tree.ts'

const V1 = 'client.authentication.k8s.io/v1'
/** Environment mark of the plugins a test starts, so that it can find any that still run. */
const MARK = 'EDGEOP_TEST_EXEC_LIMITS'
const tmp = mkdtempSync(path.join(tmpdir(), 'edgeop-exec-limits-'))
after(() => rmSync(tmp, { recursive: true, force: true }))

/** A plugin: `sh -c <script>` with `PIDS` (a file each process appends its pid to) in its environment. */
function plugin(name: string, script: string, timeoutMs?: number) {
  const pids = path.join(tmp, `${name}.pids`)
  const provider = new ExecCredentialProvider({
    exec: { command: '/bin/sh', args: ['-c', script], apiVersion: V1, interactiveMode: 'Never' },
    user: name,
    env: { PATH: process.env.PATH, PIDS: pids, COUNT: path.join(tmp, `${name}.count`), [MARK]: name },
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  })
  return { provider, pids: () => readPids(pids), running: () => processesMarkedBy(MARK, name) }
}

function readPids(file: string): number[] {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').map(Number) : []
}

/** Waits for `check`, failing after about 2,000 polls (a process that does not go never lets the test hang). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; !check(); i++) {
    if (i === 2_000) assert.fail('still waiting')
    await new Promise((r) => setTimeout(r, 5))
  }
}

const TOKEN = `{"apiVersion":"${V1}","kind":"ExecCredential","status":{"token":"t0k"}}`

test('D5: a plugin printing past the 1 MiB stdout cap is stopped, with one error naming the cap', async () => {
  assert.equal(MAX_EXEC_PLUGIN_STDOUT_BYTES, 1024 * 1024)
  // `yes` never ends: only a cap read as it arrives can answer.
  const { provider, running } = plugin('loud', 'echo $$ >> "$PIDS"; exec yes edgeop-edgeop-edgeop')
  await assert.rejects(provider.get(), {
    code: 'EDGEOP_ERR_EXEC_PLUGIN',
    message: `exec plugin "/bin/sh" (user "loud") printed more than 1 MiB on stdout (edgeop's limit for an ExecCredential); it was stopped`,
  })
  await until(() => running().length === 0)
})

test('D6: a plugin that hangs is stopped at its timeout with what it started, and the next request runs it again', async () => {
  // First run: starts a child of its own and waits forever. Second run: answers.
  const script = `echo $$ >> "$PIDS"
if [ -e "$COUNT" ]; then echo '${TOKEN}'; exit 0; fi
: > "$COUNT"
sleep 1000 & echo $! >> "$PIDS"
wait`
  const { provider, pids, running } = plugin('hung', script, 200)
  await assert.rejects(provider.get(), {
    code: 'EDGEOP_ERR_EXEC_PLUGIN',
    retryable: true,
    message: `exec plugin "/bin/sh" (user "hung") did not finish within 0.2 s (edgeop's limit for an exec plugin); it was stopped, and the next request runs it again`,
  })
  assert.equal(pids().length, 2, 'the plugin and the child it started')
  await until(() => running().length === 0)
  assert.deepEqual(await provider.get(), { token: 't0k' })
  assert.equal(pids().length, 3)
})

/** Runs a node process that asks a hanging plugin for credentials, then ends by `how`; how it ended. */
async function outlive(how: 'SIGTERM' | 'exit'): Promise<{ code: number | null; signal: string | null }> {
  const pids = path.join(tmp, `outlive-${how}.pids`)
  const script = path.join(tmp, `outlive-${how}.ts`)
  const source = path.resolve(import.meta.dirname, '../../src/config/exec-credentials.ts')
  writeFileSync(
    script,
    `import { existsSync } from 'node:fs'
import { ExecCredentialProvider } from ${JSON.stringify(source)}
const p = new ExecCredentialProvider({
  exec: { command: '/bin/sh', args: ['-c', 'echo $$ >> "$PIDS"; sleep 1000 & echo $! >> "$PIDS"; wait'], apiVersion: '${V1}', interactiveMode: 'Never' },
  user: 'u', env: { PATH: process.env.PATH, PIDS: ${JSON.stringify(pids)}, ${MARK}: '${how}' },
})
p.get().catch(() => {})
const t = setInterval(() => { if (existsSync(${JSON.stringify(pids)})) { clearInterval(t); ${how === 'exit' ? 'process.exit(0)' : "process.stdout.write('ready\\n')"} } }, 5)
`,
  )
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] })
  if (how === 'SIGTERM') {
    await new Promise<void>((resolve) => child.stdout.on('data', () => resolve()))
    await until(() => readPids(pids).length === 2)
    child.kill('SIGTERM')
  }
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
    child.on('exit', (c, s) => resolve([c, s])),
  )
  assert.ok(readPids(pids).length >= 1, how)
  return { code, signal }
}

test('D6: a plugin still running when edgeop exits, or is stopped by SIGTERM, goes with it (its process group)', async () => {
  for (const how of ['exit', 'SIGTERM'] as const) {
    const { code, signal } = await outlive(how)
    assert.deepEqual(
      { code, signal },
      how === 'exit' ? { code: 0, signal: null } : { code: null, signal: 'SIGTERM' },
    )
    await until(() => processesMarkedBy(MARK, how).length === 0)
  }
})

test('D6: the stop-signal handlers exist before the plugin is spawned, so a SIGTERM between its start and spawn() returning still stops it (a loaded CI machine: the plugin outlived edgeop)', async (t) => {
  const cp = process.getBuiltinModule('node:child_process')
  const original = cp.spawn
  const atSpawn: number[] = []
  t.mock.method(cp, 'spawn', (...args: Parameters<typeof original>) => {
    atSpawn.push(process.listenerCount('SIGTERM'))
    return original(...args)
  })
  const before = process.listenerCount('SIGTERM')
  const result = await spawnExecPlugin({
    command: process.execPath,
    args: ['-e', 'process.stdout.write("{}")'],
    env: {},
    interactive: false,
  })
  assert.equal(result.stdout, '{}')
  assert.deepEqual(atSpawn, [before + 1], 'a SIGTERM handler was installed when spawn ran')
  assert.equal(process.listenerCount('SIGTERM'), before, 'and removed once the plugin ended')
})
