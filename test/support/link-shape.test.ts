import assert from 'node:assert/strict'
import type { Socket } from 'node:net'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { paced } from './link-shape.ts'

/** Blocks the event loop, as a loaded machine does between two turns. */
function busy(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {}
}

test('the shaped link keeps byte order while it is busy, whatever the fraction of a millisecond each chunk comes at (TLS records failed their MAC on the cellular link under load)', async () => {
  const from = new PassThrough()
  const to = new PassThrough()
  const received: Buffer[] = []
  to.on('data', (c: Buffer) => received.push(c))
  const ended = new Promise<void>((r) => to.on('end', r))
  // 1 Mbit/s: the first 50,000 bytes hold the link for 400 ms; 100 one-byte chunks follow, about
  // 0.37 ms apart, each due 8 µs after the one before. A timer counts from whole milliseconds, so
  // one timer per chunk let a later one fire first.
  paced(from as unknown as Socket, to as unknown as Socket, { rttMs: 100, bitsPerSecond: 1_000_000 })
  from.emit('data', Buffer.alloc(50_000, '.'))
  const sent: string[] = []
  for (let i = 0; i < 100; i++) {
    busy(0.37)
    const byte = String.fromCharCode(33 + (i % 90))
    sent.push(byte)
    from.emit('data', Buffer.from(byte))
  }
  from.emit('end')
  await ended
  const bytes = Buffer.concat(received).toString()
  assert.equal(bytes.length, 50_100)
  assert.equal(bytes.slice(50_000), sent.join(''), 'every chunk left in the order it came')
})
