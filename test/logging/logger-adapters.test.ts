/** The console and pino-like adapters, against recording fakes (no pino dependency). */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LogFields } from '../../src/core/log.ts'
import {
  type ConsoleLike,
  consoleLogger,
  type PinoLike,
  pinoLogger,
} from '../../src/logging/logger-adapters.ts'

type Call = [method: string, ...args: unknown[]]

function fakeConsole(calls: Call[]): ConsoleLike {
  return {
    debug: (msg, fields) => void calls.push(['debug', msg, fields]),
    info: (msg, fields) => void calls.push(['info', msg, fields]),
    warn: (msg, fields) => void calls.push(['warn', msg, fields]),
    error: (msg, fields) => void calls.push(['error', msg, fields]),
  }
}

/** Records calls like pino: `child` binds, each call receives `(obj, msg)` and the bindings so far. */
function fakePino(calls: Call[], bindings: LogFields = {}): PinoLike {
  const at = (level: string) => (obj: LogFields, msg: string) => void calls.push([level, bindings, obj, msg])
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (b) => fakePino(calls, { ...bindings, ...b }),
  }
}

describe('consoleLogger', () => {
  test('calls the level method with the message and the merged fields; drops lines below the level', () => {
    const calls: Call[] = []
    const log = consoleLogger(fakeConsole(calls), { level: 'info' })
    log.debug('hidden', { a: 1 })
    log.info('started', { version: '1' })
    log.child({ controller: 'mirror' }).child({ name: 'x' }).error('failed', { name: 'y', code: 'E' })
    log.warn('no fields')
    assert.deepEqual(calls, [
      ['info', 'started', { version: '1' }],
      ['error', 'failed', { controller: 'mirror', name: 'y', code: 'E' }],
      ['warn', 'no fields', {}],
    ])
  })

  test('debug passes at level debug; credential-like fields are redacted, bound ones too', () => {
    const calls: Call[] = []
    const log = consoleLogger(fakeConsole(calls), { level: 'debug' }).child({ token: 'abc' })
    log.debug('request', { authorization: 'Bearer xyz', path: '/api' })
    assert.deepEqual(calls, [
      ['debug', 'request', { token: '[redacted]', authorization: '[redacted]', path: '/api' }],
    ])
    assert.ok(!JSON.stringify(calls).includes('xyz') && !JSON.stringify(calls).includes('abc'))
  })
})

describe('pinoLogger', () => {
  test('passes (fields, msg) to the same level, and child to pino’s child', () => {
    const calls: Call[] = []
    const log = pinoLogger(fakePino(calls))
    log.info('started', { version: '1' })
    log.child({ controller: 'mirror' }).warn('retrying', { attempt: 2 })
    log.error('plain')
    log.debug('detail', { n: 1 })
    assert.deepEqual(calls, [
      ['info', {}, { version: '1' }, 'started'],
      ['warn', { controller: 'mirror' }, { attempt: 2 }, 'retrying'],
      ['error', {}, {}, 'plain'],
      ['debug', {}, { n: 1 }, 'detail'],
    ])
  })

  test('credential-like fields and bindings are redacted before pino sees them', () => {
    const calls: Call[] = []
    pinoLogger(fakePino(calls)).child({ password: 'p' }).info('login', { secret: 's', user: 'u' })
    assert.deepEqual(calls, [
      ['info', { password: '[redacted]' }, { secret: '[redacted]', user: 'u' }, 'login'],
    ])
  })
})
