/**
 * W3C traceparent parsing and formatting, and the writer annotation's change detection.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  formatTraceparent,
  parseTraceparent,
  TRACEPARENT_ANNOTATION,
  writerContext,
} from '../../src/tracing/trace-context.ts'

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const SPAN = '00f067aa0ba902b7'

test('a valid traceparent parses (the W3C example), and formats back to the same text', () => {
  const ctx = parseTraceparent(`00-${TRACE}-${SPAN}-01`)
  assert.deepEqual(ctx, { traceId: TRACE, spanId: SPAN, sampled: true })
  assert.equal(formatTraceparent(ctx!), `00-${TRACE}-${SPAN}-01`)
  assert.equal(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.sampled, false)
  // Only bit 0 of the flags means sampled; surrounding whitespace is tolerated.
  assert.equal(parseTraceparent(` 00-${TRACE}-${SPAN}-03 `)?.sampled, true)
  assert.equal(parseTraceparent(`00-${TRACE}-${SPAN}-02`)?.sampled, false)
})

test('a later version is read as 00 and may carry more fields; version 00 may not', () => {
  assert.equal(parseTraceparent(`01-${TRACE}-${SPAN}-01-whatever`)?.traceId, TRACE)
  assert.equal(parseTraceparent(`00-${TRACE}-${SPAN}-01-whatever`), undefined)
})

test('invalid values are refused: version ff, all-zero IDs, upper case, wrong lengths, absent', () => {
  for (const bad of [
    undefined,
    '',
    `ff-${TRACE}-${SPAN}-01`,
    `00-${'0'.repeat(32)}-${SPAN}-01`,
    `00-${TRACE}-${'0'.repeat(16)}-01`,
    `00-${TRACE.toUpperCase()}-${SPAN}-01`,
    `00-${TRACE.slice(1)}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}-1`,
    `00_${TRACE}_${SPAN}_01`,
  ])
    assert.equal(parseTraceparent(bad), undefined, String(bad))
})

test('writerContext: the annotation names the writer, unless the event did not change it', () => {
  const obj = (tp?: string) => ({
    metadata: { name: 'a', ...(tp ? { annotations: { [TRACEPARENT_ANNOTATION]: tp } } : {}) },
  })
  const tp = `00-${TRACE}-${SPAN}-01`
  assert.deepEqual(writerContext(obj(tp)), { traceId: TRACE, spanId: SPAN, sampled: true })
  assert.equal(writerContext(obj(tp), obj(tp)), undefined, 'unchanged: not this write')
  assert.equal(writerContext(obj(tp), obj())?.spanId, SPAN, 'newly set')
  assert.equal(writerContext(obj()), undefined)
  assert.equal(writerContext(obj('garbage')), undefined)
})
