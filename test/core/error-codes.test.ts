/**
 * Every declared error code is thrown somewhere in src/: a code a caller can match on but that
 * never occurs is a promise the library does not keep. Read from the source text, so a code
 * added to the union without a throw site fails here.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'

const SRC = resolve(import.meta.dirname, '../../src')
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )

test('every ErrorCode in src/core/errors.ts is used outside its declaration', () => {
  const errorsFile = join(SRC, 'core/errors.ts')
  const declared = readFileSync(errorsFile, 'utf8')
    .match(/export type ErrorCode =([\s\S]*?)\n\n/)![1]!
    .match(/'EDGEOP_ERR_[A-Z_]+'/g)!
  assert.ok(declared.length > 5, 'the ErrorCode union was found')
  const elsewhere = files(SRC)
    .filter((f) => f !== errorsFile)
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n')
  assert.deepEqual(
    declared.filter((code) => !elsewhere.includes(code)),
    [],
  )
})
