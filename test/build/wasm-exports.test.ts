/**
 * build/wasm-exports.ts and its one use: the artifact's llhttp module keeps exactly the exports
 * undici's HTTP/1.1 client calls (HTTP/1.1 through that module: undici-trims.test.ts and
 * artifact.test.ts).
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { test } from 'node:test'
import { LLHTTP_EXPORTS_USED, ROOT } from '../../build/artifact.ts'
import { keepExports } from '../../build/wasm-exports.ts'

const llhttp = createRequire(import.meta.url)('undici/lib/llhttp/llhttp_simd-wasm.js') as Buffer
/** The part of the WebAssembly JS API used here (the project's TypeScript libs do not declare it). */
const { Module } = (
  globalThis as unknown as {
    WebAssembly: {
      Module: {
        new (bytes: Uint8Array): object
        exports(m: object): { name: string }[]
        imports(m: object): { module: string; name: string }[]
      }
    }
  }
).WebAssembly
const exportNames = (wasm: Uint8Array) => Module.exports(new Module(wasm)).map((e) => e.name)
const imports = (wasm: Uint8Array) => Module.imports(new Module(wasm)).map((e) => `${e.module}.${e.name}`)

test('the kept llhttp exports are exactly the ones undici’s HTTP/1.1 client calls', () => {
  const client = readFileSync(join(ROOT, 'node_modules/undici/lib/dispatcher/client-h1.js'), 'utf8')
  const called = new Set([...client.matchAll(/\bllhttp\.(\w+)/g)].map((m) => m[1]))
  assert.deepEqual([...called].sort(), [...LLHTTP_EXPORTS_USED].sort())
})

test('keepExports keeps only the named exports and the module still validates', () => {
  const trimmed = keepExports(llhttp, LLHTTP_EXPORTS_USED)
  assert.ok(exportNames(llhttp).length > LLHTTP_EXPORTS_USED.size, 'sanity: the full module exports more')
  assert.deepEqual(exportNames(trimmed).sort(), [...LLHTTP_EXPORTS_USED].sort())
  assert.ok(trimmed.length < llhttp.length)
  // The imports (undici's parser callbacks) are untouched.
  assert.deepEqual(imports(trimmed), imports(llhttp))
})

test('keepExports fails on a name the module does not export', () => {
  assert.throws(
    () => keepExports(llhttp, new Set(['memory', 'llhttp_nonexistent'])),
    /no export named llhttp_nonexistent/,
  )
})
