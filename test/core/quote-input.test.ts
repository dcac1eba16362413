import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  MAX_QUOTED_INPUT_CHARS,
  MAX_QUOTED_INPUTS,
  quoteInput,
  quoteInputs,
} from '../../src/core/quote-input.ts'

test('short input is quoted as it is; quotes, backslashes and control characters become escapes on one line', () => {
  assert.equal(quoteInput('façade'), '"façade"')
  assert.equal(quoteInput(''), '""')
  assert.equal(quoteInput('a"b\\c'), '"a\\"b\\\\c"')
  assert.equal(quoteInput('x\n\u0000y'), '"x\\n\\u0000y"')
})

test('long input is cut to MAX_QUOTED_INPUT_CHARS characters and its length is given', () => {
  const huge = 'a'.repeat(50 * 1024 * 1024)
  const quoted = quoteInput(huge)
  assert.equal(quoted, `"${'a'.repeat(MAX_QUOTED_INPUT_CHARS)}…" (52428800 characters)`)
  assert.equal(quoteInput('a'.repeat(MAX_QUOTED_INPUT_CHARS)), `"${'a'.repeat(MAX_QUOTED_INPUT_CHARS)}"`)
  assert.equal(quoteInput('abcdef', 3), '"abc…" (6 characters)')
})

test('a cut never splits a surrogate pair', () => {
  assert.equal(quoteInput('ab😀cd', 3), '"ab…" (6 characters)')
  assert.equal(quoteInput('a😀cd', 3), '"a😀…" (5 characters)')
})

test('lists: at most MAX_QUOTED_INPUTS entries, then a count; none when empty', () => {
  assert.equal(quoteInputs([]), 'none')
  assert.equal(quoteInputs(['a', 'b']), '"a", "b"')
  const many = Array.from({ length: MAX_QUOTED_INPUTS + 5 }, (_, i) => `c${i}`)
  assert.equal(
    quoteInputs(many),
    `${many
      .slice(0, MAX_QUOTED_INPUTS)
      .map((n) => `"${n}"`)
      .join(', ')} and 5 more`,
  )
})
