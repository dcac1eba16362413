import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManagedProcess } from '../../src/testing/process.ts'
import { scratchDirs } from '../support/scratch.ts'

const scratch = scratchDirs('edgeop-process-eventually-')

async function node(name: string, script: string): Promise<ManagedProcess> {
  const dir = await scratch()
  return new ManagedProcess({
    name,
    command: process.execPath,
    args: ['-e', script],
    logFile: join(dir, `${name}.log`),
  })
}

test('a wait on a process that exits fails at once with its exit status and log tail, not at the timeout', {
  timeout: 60_000,
}, async () => {
  const p = await node('quitter', 'console.log("giving up"); process.exit(3)')
  p.start()
  await assert.rejects(
    p.eventually(() => false, { what: 'never', timeoutMs: 3_600_000 }),
    (err: Error & { code?: string }) =>
      err.code === 'EDGEOP_ERR_CONTROL_PLANE' &&
      /quitter: exited \(code 3, signal null\) while waiting for never/.test(err.message) &&
      err.message.includes('giving up'),
  )
})

test('a wait on a process that was never started fails at once', async () => {
  const p = await node('idle', '')
  await assert.rejects(
    p.eventually(() => true, { what: 'ready', timeoutMs: 3_600_000 }),
    {
      code: 'EDGEOP_ERR_CONTROL_PLANE',
    },
  )
})

test('a wait that times out while the process runs names what it waited for and the log tail', async () => {
  const p = await node('sleeper', 'console.log("still here"); setInterval(() => {}, 1000)')
  p.start()
  try {
    await assert.rejects(
      p.eventually(
        () => {
          throw new Error('refused')
        },
        { what: '/healthz', timeoutMs: 0, intervalMs: 1 },
      ),
      (err: Error & { code?: string; retryable?: boolean }) =>
        err.code === 'EDGEOP_ERR_CONTROL_PLANE' &&
        err.retryable === true &&
        /sleeper: not reached within 0 ms: \/healthz \(last check failed: refused\)/.test(err.message) &&
        err.message.includes('--- last lines of'),
    )
    assert.equal(await p.eventually(() => 'up', { what: 'up', timeoutMs: 0 }), 'up')
  } finally {
    await p.stop()
  }
})
