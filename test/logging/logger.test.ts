import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { EventHandler, HandlerRegistration } from '../../src/cache/listener.ts'
import { Controller } from '../../src/controller/controller.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { EdgeopError } from '../../src/core/errors.ts'
import { type Logger, noopLogger } from '../../src/core/log.ts'
import {
  createLogger,
  DEFAULT_LIBRARY_LOG_LEVEL,
  defaultLogger,
  type LoggerOptions,
} from '../../src/logging/logger.ts'

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678)
const TS = '2026-01-02T03:04:05.678Z'

function capture(options: LoggerOptions = {}) {
  const lines: string[] = []
  const clock = new ManualClock(T0)
  const log = createLogger({ clock, stream: { write: (s) => lines.push(s) }, ...options })
  return { log, lines, clock }
}

describe('logger: JSON lines', () => {
  test('one line per call: ts, level, msg, then fields', () => {
    const { log, lines, clock } = capture()
    log.info('started', { version: '1.0', workers: 2, leader: false })
    clock.jump(1000)
    log.error('failed')
    assert.deepEqual(lines, [
      `{"ts":"${TS}","level":"info","msg":"started","version":"1.0","workers":2,"leader":false}\n`,
      '{"ts":"2026-01-02T03:04:06.678Z","level":"error","msg":"failed"}\n',
    ])
  })

  test('levels below the configured one are dropped; default level is info', () => {
    const { log, lines } = capture()
    log.debug('hidden')
    log.info('i')
    const warn = capture({ level: 'warn' })
    warn.log.info('hidden')
    warn.log.warn('w')
    warn.log.error('e')
    const debug = capture({ level: 'debug' })
    debug.log.debug('d')
    assert.deepEqual(
      [...lines, ...warn.lines, ...debug.lines].map((l) => JSON.parse(l).msg),
      ['i', 'w', 'e', 'd'],
    )
  })

  test('child binds fields to every line; call fields override; reserved names are prefixed', () => {
    const { log, lines } = capture({ fields: { app: 'mirror' } })
    const c = log.child({ namespace: 'a', name: 'b' }).child({ reconcileID: 'r-1' })
    c.info('reconciled', { name: 'override', ts: 'mine', msg: 'x' })
    log.info('parent unchanged')
    assert.deepEqual(lines, [
      `{"ts":"${TS}","level":"info","msg":"reconciled","app":"mirror","namespace":"a","name":"override","reconcileID":"r-1","_ts":"mine","_msg":"x"}\n`,
      `{"ts":"${TS}","level":"info","msg":"parent unchanged","app":"mirror"}\n`,
    ])
  })

  test('credential-like fields are redacted at any depth, bound or per call', () => {
    const { log, lines } = capture()
    log.child({ token: 'abc' }).warn('auth', {
      user: { name: 'u', password: 'hunter2', nested: [{ clientKey: 'PEM' }] },
      Authorization: 'Bearer xyz',
      certificateAuthority: 'ca-data',
    })
    assert.equal(
      lines[0],
      `{"ts":"${TS}","level":"warn","msg":"auth","token":"[redacted]","user":{"name":"u","password":"[redacted]","nested":[{"clientKey":"[redacted]"}]},"Authorization":"[redacted]","certificateAuthority":"[redacted]"}\n`,
    )
    assert.ok(!lines[0]!.includes('hunter2') && !lines[0]!.includes('xyz') && !lines[0]!.includes('PEM'))
  })

  test('errors become message + code, never cause or stack', () => {
    const { log, lines } = capture()
    const secretCause = new Error('Authorization: Bearer s3cret')
    const err = new EdgeopError('EDGEOP_ERR_API', 'GET /api/v1/pods: 403 Forbidden', { cause: secretCause })
    log.error('list failed', { error: err, plain: new TypeError('boom'), errors: [err] })
    assert.equal(
      lines[0],
      `{"ts":"${TS}","level":"error","msg":"list failed","error":{"message":"GET /api/v1/pods: 403 Forbidden","code":"EDGEOP_ERR_API"},"plain":{"message":"boom"},"errors":[{"message":"GET /api/v1/pods: 403 Forbidden","code":"EDGEOP_ERR_API"}]}\n`,
    )
    assert.ok(!lines[0]!.includes('s3cret') && !lines[0]!.includes(' at '))
  })

  test('cycles, binary data, bigints, dates, functions and deep nesting are serialized safely', () => {
    const { log, lines } = capture()
    const a: Record<string, unknown> = { n: 1 }
    a.self = a
    const shared = { s: 1 }
    let deep: Record<string, unknown> = { leaf: true }
    for (let i = 0; i < 8; i++) deep = { d: deep }
    log.info('odd values', {
      a,
      twice: [shared, shared],
      buf: Buffer.from('private key bytes'),
      big: 10n,
      when: new Date(T0),
      fn: () => 1,
      inf: Number.POSITIVE_INFINITY,
      deep,
      missing: undefined,
    })
    assert.equal(
      lines[0],
      `{"ts":"${TS}","level":"info","msg":"odd values","a":{"n":1,"self":"[circular]"},"twice":[{"s":1},{"s":1}],"buf":"[17 bytes]","big":"10","when":"${TS}","inf":"Infinity","deep":{"d":{"d":{"d":{"d":{"d":"[object]"}}}}}}\n`,
    )
  })

  test('a stream that throws never throws into the caller', () => {
    const log = createLogger({
      stream: {
        write() {
          throw new Error('EPIPE')
        },
      },
    })
    assert.doesNotThrow(() => log.error('x'))
  })
})

describe('logger: text format', () => {
  test('timestamp, padded level, message, then key=value with quoting only when needed', () => {
    const { log, lines } = capture({ format: 'text', level: 'debug' })
    const c = log.child({ controller: 'mirror' })
    c.info('reconciled', { key: 'not-a-secret-name?', name: 'b', note: 'two words', n: 3, obj: { a: [1] } })
    c.debug('d')
    c.error('failed', { error: new EdgeopError('EDGEOP_ERR_API', 'x "y"'), empty: '' })
    assert.deepEqual(lines, [
      `${TS} INFO  reconciled controller=mirror key=[redacted] name=b note="two words" n=3 obj={"a":[1]}\n`,
      `${TS} DEBUG d controller=mirror\n`,
      `${TS} ERROR failed controller=mirror error={"message":"x \\"y\\"","code":"EDGEOP_ERR_API"} empty=""\n`,
    ])
  })
})

/** Runs `fn` with `process.stderr.write` recorded (and not printed). */
async function onStderr(fn: () => Promise<void> | void): Promise<string[]> {
  const lines: string[] = []
  const write = process.stderr.write
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk))
    return true
  }) as typeof process.stderr.write
  try {
    await fn()
  } finally {
    process.stderr.write = write
  }
  return lines
}

describe('logger: the library default', () => {
  test('warnings and errors as JSON lines on stderr; info and debug dropped', async () => {
    assert.equal(DEFAULT_LIBRARY_LOG_LEVEL, 'warn')
    assert.equal(defaultLogger(), defaultLogger(), 'one shared logger')
    const lines = await onStderr(() => {
      const log = defaultLogger().child({ component: 'test' })
      log.debug('d')
      log.info('i')
      log.warn('cannot reach the API server', { attempt: 3 })
      log.error('failed', { error: new EdgeopError('EDGEOP_ERR_NETWORK', 'connect ECONNREFUSED') })
    })
    assert.deepEqual(
      lines.map((l) => {
        const { ts, ...rest } = JSON.parse(l) as Record<string, unknown>
        assert.match(String(ts), /^\d{4}-\d\d-\d\dT/)
        return rest
      }),
      [
        { level: 'warn', msg: 'cannot reach the API server', component: 'test', attempt: 3 },
        {
          level: 'error',
          msg: 'failed',
          component: 'test',
          error: { message: 'connect ECONNREFUSED', code: 'EDGEOP_ERR_NETWORK' },
        },
      ],
    )
  })

  test('a Controller given no logger reports a failing reconcile on stderr; a given logger replaces it', async () => {
    const source = {
      describe: 'fake',
      handlers: [] as EventHandler[],
      addEventHandler(h: EventHandler): HandlerRegistration {
        this.handlers.push(h)
        return { hasSynced: () => true, whenSynced: async () => {}, pending: 0, remove() {} }
      },
    }
    const runOnce = async (logger?: Logger): Promise<void> => {
      let failed = false
      source.handlers = []
      const ctl = new Controller({
        name: 'mirror',
        for: { source, kind: 'App', group: 'example.com', namespaced: true },
        clock: new ManualClock(), // the retry never comes due
        async reconcile() {
          throw new Error('cannot reach the database')
        },
        observer: {
          // Called after the failure is logged.
          onReconcile: () => {
            failed = true
          },
        },
        ...(logger ? { logger } : {}),
      })
      const ac = new AbortController()
      const done = ctl.run(ac.signal)
      for (const h of source.handlers) h.onAdd?.({ metadata: { namespace: 'ns', name: 'a' } }, false)
      while (!failed) await new Promise((r) => setImmediate(r))
      ac.abort()
      await done
    }
    const lines = await onStderr(() => runOnce())
    assert.equal(lines.length, 1, JSON.stringify(lines))
    const line = JSON.parse(lines[0]!) as Record<string, unknown>
    assert.equal(line.level, 'error')
    assert.equal(line.controller, 'mirror')
    assert.equal(line.error, 'cannot reach the database')
    assert.equal(await onStderr(() => runOnce(noopLogger)).then((l) => l.length), 0)
  })
})
