import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { describe, test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import { onShutdownSignals, withGracePeriod } from '../../src/manager/shutdown.ts'
import { recordingLogger } from '../support/recording-logger.ts'

function fakeProcess() {
  const emitter = new EventEmitter()
  const exits: number[] = []
  const logger = recordingLogger(['info', 'warn'])
  return { emitter, exits, logger, exit: (code: number) => exits.push(code) }
}

describe('shutdown signals', () => {
  test('the first signal aborts with its name as reason; the second exits at once with 128 + number', () => {
    const p = fakeProcess()
    const signal = onShutdownSignals({ process: p.emitter, exit: p.exit, logger: p.logger })
    assert.equal(signal.aborted, false)
    assert.equal(p.emitter.listenerCount('SIGTERM'), 1)
    assert.equal(p.emitter.listenerCount('SIGINT'), 1)
    let aborts = 0
    signal.addEventListener('abort', () => aborts++)
    p.emitter.emit('SIGTERM')
    assert.equal(signal.aborted, true)
    assert.equal(signal.reason, 'SIGTERM')
    assert.deepEqual(p.exits, [])
    p.emitter.emit('SIGINT')
    assert.deepEqual(p.exits, [130])
    p.emitter.emit('SIGTERM')
    assert.deepEqual(p.exits, [130, 143])
    assert.equal(aborts, 1)
    assert.deepEqual(
      p.logger.lines.map(({ level, fields }) => [level, fields?.signal]),
      [
        ['info', 'SIGTERM'],
        ['warn', 'SIGINT'],
        ['warn', 'SIGTERM'],
      ],
    )
  })

  test('only the configured signals are listened to', () => {
    const p = fakeProcess()
    const signal = onShutdownSignals({ signals: ['SIGHUP'], process: p.emitter, exit: p.exit })
    assert.equal(p.emitter.listenerCount('SIGTERM'), 0)
    p.emitter.emit('SIGHUP')
    assert.equal(signal.reason, 'SIGHUP')
  })
})

describe('withGracePeriod', () => {
  test('resolves with the value when the work finishes in time, and cancels its timer', async () => {
    const clock = new ManualClock()
    const p = withGracePeriod(Promise.resolve(7), 30_000, clock)
    assert.equal(await p, 7)
    assert.equal(clock.pending, 0)
  })

  test('rejects with EDGEOP_ERR_TIMEOUT when the grace period runs out first', async () => {
    const clock = new ManualClock()
    let finish!: () => void
    const work = new Promise<void>((r) => {
      finish = r
    })
    const p = withGracePeriod(work, 30_000, clock)
    let settled = false
    p.catch(() => {}).finally(() => {
      settled = true
    })
    await clock.advance(29_999)
    assert.equal(settled, false)
    await clock.advance(1)
    await assert.rejects(p, (e: Error & { code: string }) => {
      assert.equal(e.code, 'EDGEOP_ERR_TIMEOUT')
      assert.equal(e.message, 'did not finish within the grace period of 30000 ms')
      return true
    })
    finish()
  })

  test('work that fails in time rejects with its own error', async () => {
    const clock = new ManualClock()
    await assert.rejects(
      withGracePeriod(Promise.reject(new Error('drain failed')), 1000, clock),
      /drain failed/,
    )
    assert.equal(clock.pending, 0)
  })

  test('a negative grace period waits forever; zero accepts only work already done', async () => {
    const clock = new ManualClock()
    let finish!: (v: string) => void
    const forever = withGracePeriod(new Promise<string>((r) => (finish = r)), -1, clock)
    assert.equal(clock.pending, 0)
    await clock.advance(10 ** 9)
    finish('late')
    assert.equal(await forever, 'late')
    assert.equal(await withGracePeriod(Promise.resolve('done'), 0, clock), 'done')
    const pending = withGracePeriod(new Promise(() => {}), 0, clock)
    await clock.advance(0)
    await assert.rejects(pending, /grace period of 0 ms/)
  })
})

describe('shutdown signals in a real process', () => {
  test('SIGTERM aborts, the process drains and exits 0; a second SIGTERM exits 143 at once', async () => {
    const { spawn } = await import('node:child_process')
    const module = new URL('../../src/manager/shutdown.ts', import.meta.url).href
    const script = `
      import { onShutdownSignals } from ${JSON.stringify(module)}
      const signal = onShutdownSignals()
      const keepAlive = setInterval(() => {}, 1000)
      signal.addEventListener('abort', () => {
        console.log('aborted ' + signal.reason)
        if (process.argv[1] === 'drain') { clearInterval(keepAlive); process.exitCode = 0 }
      })
      console.log('ready')`
    const run = async (mode: string, signals: number) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script, mode], {
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      let out = ''
      let wake = () => {}
      child.stdout.on('data', (c: Buffer) => {
        out += c
        wake()
      })
      const until = (text: string) =>
        new Promise<void>((r) => {
          wake = () => out.includes(text) && r()
          wake()
        })
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
      await until('ready')
      child.kill('SIGTERM')
      if (signals === 2) {
        await until('aborted')
        child.kill('SIGTERM')
      }
      return { code: await exited, out }
    }
    const drained = await run('drain', 1)
    assert.deepEqual(drained, { code: 0, out: 'ready\naborted SIGTERM\n' })
    const forced = await run('hang', 2)
    assert.deepEqual(forced, { code: 143, out: 'ready\naborted SIGTERM\n' })
  })
})
