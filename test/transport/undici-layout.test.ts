/**
 * What edgeop relies on inside undici, pinned. src/transport/undici.ts deep-imports three undici
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

test('the three modules src/transport/undici.ts imports exist with the shapes it uses', () => {
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

test('the files the edgeop/esbuild trims replace still exist, and undici reaches its HTTP/1.1 client only for a connection without h2', () => {
  const trimmed = [
    'lib/dispatcher/client-h1.js',
    'lib/web/fetch/formdata.js',
    'lib/web/fetch/body.js',
    'lib/web/webidl/index.js',
  ]
  assert.deepEqual(
    trimmed.filter((f) => !existsSync(join(UNDICI, f))),
    [],
  )
  // noHttp1Client replaces client-h1.js by a function that throws; undici must call it only where
  // ALPN did not select h2 (which edgeop's connector never hands over), and inside its try/catch.
  const client = readFileSync(join(UNDICI, 'lib/dispatcher/client.js'), 'utf8')
  assert.match(client, /const connectH1 = require\(['"]\.\/client-h1(\.js)?['"]\)/)
  assert.deepEqual([...client.matchAll(/connectH1\(/g)].length, 1, 'one call of connectH1')
  assert.match(
    client,
    /try \{\s*client\[kHTTPContext\] = socket\.alpnProtocol === 'h2'\s*\? connectH2\(client, socket\)\s*: connectH1\(client, socket\)\s*\} catch/,
    'connectH1 only for a connection whose ALPN protocol is not h2, with its throw caught',
  )
  assert.equal(
    (require('undici/lib/dispatcher/client-h1.js') as unknown as { name: string }).name,
    'connectH1',
    'client-h1.js exports the one function the stub stands for',
  )
})
