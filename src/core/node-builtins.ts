/**
 * @module node-builtins — the Node built-ins whose ESM namespace costs memory, taken as their CommonJS
 * exports instead.
 *
 * An ESM `import … from 'node:x'` (which the library build keeps as such) makes Node build the
 * module's namespace, and that reads every export once, getters included. Three getters are
 * expensive and nothing in edgeop needs them: `http.WebSocket` (with `CloseEvent`, `MessageEvent`)
 * loads Node's own bundled undici, about 12 MB of RSS; `tls.rootCertificates` copies the whole root
 * store, about 1.7 MB; `process.stdin`/`stdout`/`stderr` open their streams, about 1.3 MB (Node
 * 24.21, `npm run bench:base-rss -- --attribute`). `process.getBuiltinModule` returns the same
 * exports object without a namespace, so no getter runs until it is used. Type-only imports of
 * these modules stay ordinary imports (they are erased); `process` is the global.
 * test/build/entry-imports.test.ts fails when an entry's graph imports one of them as ESM again.
 *
 * Functions, not constants: a module is taken when first used (Node caches it), so a program that never
 * starts a server or falls back to HTTP/1.1 does not load `node:http` for edgeop; and the library's split
 * build puts this file in one chunk, where constants would load all three modules for any entry using one.
 */
import type * as http from 'node:http'
import type * as tls from 'node:tls'
import type * as util from 'node:util'

/** `node:http`, without the namespace that loads Node's bundled undici. */
export function nodeHttp(): typeof http {
  return process.getBuiltinModule('node:http')
}

/** `node:tls`, without the namespace that copies the root certificates. */
export function nodeTls(): typeof tls {
  return process.getBuiltinModule('node:tls')
}

/** `node:util`, without the namespace (its getters build transferable abort signals). */
export function nodeUtil(): typeof util {
  return process.getBuiltinModule('node:util')
}
