/**
 * What edgeop relies on inside undici, pinned. src/client/undici.ts deep-imports three undici
 * files (for size: the package entry loads fetch, WebSocket and the caches), and the
 * `edgeop/esbuild` trims match undici file paths. undici's package.json has no `exports` map
 * today; if a release adds one, or moves or reshapes these files, this test fails (it also
 * runs against the lowest and highest undici the dependency range allows:
 * test/build/dependency-range.test.ts).
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { test } from 'node:test'

const require = createRequire(import.meta.url)
const UNDICI = dirname(require.resolve('undici/package.json'))

test('undici has no exports map, so its lib/ files stay importable by path', () => {
  const pkg = JSON.parse(readFileSync(join(UNDICI, 'package.json'), 'utf8')) as Record<string, unknown>
  assert.equal(
    pkg.exports,
    undefined,
    `undici ${String(pkg.version)} declares exports: deep imports would break`,
  )
})

test('the three modules src/client/undici.ts imports exist with the shapes it uses', () => {
  const Pool = require('undici/lib/dispatcher/pool.js') as new (origin: string) => object
  assert.equal(typeof Pool, 'function')
  for (const m of ['dispatch', 'close', 'destroy'])
    assert.equal(typeof (Pool.prototype as Record<string, unknown>)[m], 'function', `Pool.prototype.${m}`)
  const request = require('undici/lib/api/api-request.js') as unknown
  assert.equal(typeof request, 'function', 'api-request.js exports the request function')
  const buildConnector = require('undici/lib/core/connect.js') as (o: object) => unknown
  assert.equal(typeof buildConnector, 'function')
  assert.equal(typeof buildConnector({}), 'function', 'buildConnector returns a connector')
})

test('the files the edgeop/esbuild trims replace still exist, and Milo (where present) is still behind esbuildDetection', () => {
  const trimmed = [
    'lib/llhttp/llhttp-wasm.js',
    'lib/llhttp/llhttp_simd-wasm.js',
    'lib/llhttp/constants.js',
    'lib/web/fetch/formdata.js',
    'lib/web/fetch/body.js',
    'lib/web/webidl/index.js',
  ]
  assert.deepEqual(
    trimmed.filter((f) => !existsSync(join(UNDICI, f))),
    [],
  )
  const constants = require('undici/lib/llhttp/constants.js') as Record<string, unknown>
  assert.equal(typeof constants.ERROR, 'object', 'llhttp constants export ERROR')
  assert.equal(typeof constants.TYPE, 'object', 'llhttp constants export TYPE')
  const h1 = readFileSync(join(UNDICI, 'lib/dispatcher/client-h1.js'), 'utf8')
  // undici gained the experimental Milo parser in 8.x; where it has it, the define must switch it off.
  if (/milo/i.test(h1)) assert.match(h1, /typeof esbuildDetection/, 'the Milo switch the define turns off')
  assert.match(
    h1,
    /require\(['"]\.\.\/llhttp\/constants(\.js)?['"]\)/,
    'client-h1 loads llhttp constants from the trimmed path',
  )
})
