/**
 * @module build/undici-trims — undici code the operator artifact can never reach, replaced at bundle time.
 *
 * Each trim names the undici file, the top-level declarations it replaces and why edgeop cannot
 * reach them. A declaration is cut from its first line (`function name (`, `async function name (`
 * or `class name `) to the next line that is a lone `}` (undici's standard style closes every
 * top-level declaration so). undici is pinned exactly in package.json; if a declaration is missing
 * or ambiguous after an upgrade, the build fails instead of bundling something else.
 */
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type * as esbuild from 'esbuild'

/** One top-level declaration of an undici file and what replaces it. */
export interface DeclarationStub {
  /**
   * `function`, `async function` or `class` (top level, closed by a lone `}` line), or `method`
   * (a class member indented two spaces, closed by `  }`).
   */
  readonly kind: 'function' | 'async function' | 'class' | 'method'
  readonly name: string
  /** The replacement source (same name, so every caller still resolves). */
  readonly stub: string
}

/** The trims of one undici file. */
export interface FileTrim {
  /** Path below `undici/lib/`, with `/` separators. */
  readonly file: string
  /** Why nothing edgeop does reaches the replaced declarations. */
  readonly reason: string
  readonly stubs: readonly DeclarationStub[]
  /** Exact texts replaced, each found exactly once (messages of paths the artifact cannot take). */
  readonly replace?: readonly (readonly [string, string])[]
}

/**
 * The message of every request a trimmed body writer receives (none can: see
 * {@link REQUEST_BODY_WRITERS}); it fails that request through undici's own `abort` callback.
 */
export const UNBUNDLED_BODY = 'edgeop: only string and Buffer request bodies are bundled'

const abortWith = (kind: 'function' | 'async function', name: string): DeclarationStub => ({
  kind,
  name,
  stub: `function ${name} (abort) { queueMicrotask(() => abort(new Error('${UNBUNDLED_BODY}'))) }`,
})

/**
 * undici's HTTP/2 request-body writers for streams, Blobs and (async) iterables. The client encodes
 * every body as a string (`encodeBody` in src/transport/body-codec.ts) and undici's Request turns a
 * string into a Buffer, which goes through `writeBuffer` (kept); the other writers are dead code in
 * the artifact. (undici's HTTP/1.1 client, with its own writers, is not bundled at all:
 * `noHttp1Client` in src/esbuild/undici-trims.ts.)
 */
export const REQUEST_BODY_WRITERS: readonly FileTrim[] = [
  {
    file: 'dispatcher/client-h2.js',
    reason: 'request bodies are strings (Buffers inside undici): only writeBuffer runs',
    stubs: [
      abortWith('function', 'writeStream'),
      abortWith('async function', 'writeBlob'),
      abortWith('async function', 'writeIterable'),
    ],
  },
]

/** The message of an upgrade or CONNECT request, which the artifact never sends (see {@link UPGRADE_AND_CONNECT}). */
export const UNBUNDLED_UPGRADE = 'edgeop: HTTP upgrade and CONNECT requests are not bundled'

const noop = (name: string): DeclarationStub => ({ kind: 'function', name, stub: `function ${name} () {}` })

/**
 * undici's protocol-upgrade and CONNECT handling (WebSocket, proxies' tunnels). The client's methods
 * are GET, POST, PUT, PATCH and DELETE (`Method` in src/transport/request-spec.ts) and it never sets
 * undici's `upgrade` option; on HTTP/2 (the only protocol undici serves in the artifact)
 * `setupUpgradeStream` runs only for CONNECT or `upgrade`. The stream listeners only it installs are
 * stubbed with it; `onUpgradeStreamClose` stays a function because a GOAWAY removes it as a listener.
 */
export const UPGRADE_AND_CONNECT: readonly FileTrim[] = [
  {
    file: 'dispatcher/client-h2.js',
    reason: 'no request asks for an upgrade or uses CONNECT',
    stubs: [
      noop('onUpgradeStreamClose'),
      noop('removeUpgradeStreamListeners'),
      noop('releaseUpgradeStream'),
      noop('failUpgradeStream'),
      noop('onUpgradeStreamError'),
      noop('onUpgradeStreamEnd'),
      noop('onUpgradeStreamTimeout'),
      noop('onUpgradeResponse'),
      {
        kind: 'function',
        name: 'setupUpgradeStream',
        stub: `function setupUpgradeStream (stream, state) { stream.destroy(); state.abort(new Error('${UNBUNDLED_UPGRADE}')) }`,
      },
    ],
  },
  {
    file: 'core/request.js',
    reason: 'called only by the upgrade path above',
    stubs: [
      {
        kind: 'method',
        name: 'onRequestUpgrade',
        stub: `onRequestUpgrade () { throw new Error('${UNBUNDLED_UPGRADE}') }`,
      },
    ],
  },
  {
    file: 'core/diagnostics.js',
    reason:
      'NODE_DEBUG=websocket logs WebSocket events, which only the (unbundled) WebSocket client publishes',
    stubs: [noop('trackWebSocketEvents')],
  },
]

/**
 * undici's `NODE_DEBUG=undici` (and `=fetch`) lines: debug logging that subscribes to undici's
 * diagnostics channels when the variable names it. The artifact reports its requests itself (the
 * client's spans with `--tracing`, its request errors with method, path and step), and the channels
 * stay, so a `diagnostics_channel` subscriber (an APM agent) still sees every undici event. Cut to pay
 * for the artifact's size budget (about 1.3 KB minified).
 */
export const DEBUG_LOGGING: readonly FileTrim[] = [
  {
    file: 'core/diagnostics.js',
    reason: 'NODE_DEBUG=undici debug lines; the channels themselves stay',
    stubs: [noop('trackClientEvents'), noop('trackRequestEvents')],
  },
]

/**
 * Code reached only through a request option edgeop never sets: `responseHeaders: 'raw'`
 * (src/transport/transport.ts passes path, method, headers, body, signal and the two timeouts).
 */
export const UNSET_OPTIONS: readonly FileTrim[] = [
  {
    file: 'core/util.js',
    reason: "parseRawHeaders serves only `responseHeaders: 'raw'`",
    stubs: [
      {
        kind: 'function',
        name: 'parseRawHeaders',
        stub: "function parseRawHeaders () { throw new Error('edgeop: undici responseHeaders: raw is not bundled') }",
      },
    ],
  },
]

/** A declaration nothing in the artifact calls, replaced by one that says so if it ever is. */
const unreachable = (kind: 'function' | 'async function', name: string): DeclarationStub => ({
  kind,
  name,
  stub: `function ${name} () { throw new Error('edgeop: undici ${name} is not bundled') }`,
})

/** An error class nothing in the artifact constructs, reduced to its name (its `instanceof` check is inherited). */
const unusedError = (name: string): DeclarationStub => ({
  kind: 'class',
  name,
  stub: `class ${name} extends UndiciError {}`,
})

/**
 * Exports and methods of undici's shared modules that no other file in the artifact (undici's,
 * zod's or edgeop's) names; test/build/undici-trims.test.ts checks that against the bundle. They
 * serve undici's retry, redirect, proxy, balanced-pool, WebSocket, interceptor and fetch parts,
 * none of which is bundled.
 */
export const UNREFERENCED_EXPORTS: readonly FileTrim[] = [
  {
    file: 'core/errors.js',
    reason: 'thrown only by undici features the artifact does not bundle',
    stubs: [
      'InvalidReturnValueError',
      'BalancedPoolMissingUpstreamError',
      'RequestRetryError',
      'ResponseError',
      'SecureProxyConnectionError',
      'ProxyConnectionError',
      'MaxRedirectsError',
      'MaxOriginsReachedError',
      'Socks5ProxyError',
      'MessageSizeExceededError',
    ].map(unusedError),
  },
  {
    file: 'core/util.js',
    reason: 'helpers of the retry handler, the mock agent and fetch',
    stubs: [
      unreachable('function', 'wrapRequestBody'),
      { kind: 'class', name: 'BodyAsyncIterable', stub: 'class BodyAsyncIterable {}' },
      unreachable('function', 'toRawHeaders'),
      unreachable('function', 'encodeRawHeaders'),
      unreachable('function', 'parseRangeHeader'),
    ],
  },
  {
    file: 'api/readable.js',
    reason:
      "a response body's dump() serves undici's dump interceptor and fetch; edgeop reads bodies with text() or iterates them",
    stubs: [
      {
        kind: 'method',
        name: 'dump',
        stub: "dump () { throw new Error('edgeop: undici body.dump() is not bundled') }",
      },
    ],
  },
  {
    file: 'dispatcher/dispatcher.js',
    reason: 'interceptors: edgeop composes none (its retries and timeouts are its own)',
    stubs: [
      {
        kind: 'method',
        name: 'compose',
        stub: "compose () { throw new Error('edgeop: undici interceptors (Dispatcher.compose) are not bundled') }",
      },
    ],
  },
]

/**
 * undici's `Request` sentences for a FormData body and for options the client never sets (path, method,
 * headers, a string body, the signal and the two timeouts are all it passes), shortened to the option's name.
 * Cut to pay for the size budget.
 */
export const REQUEST_OPTION_MESSAGES: readonly FileTrim[] = [
  {
    file: 'core/request.js',
    reason:
      'the client passes path, method, headers, a string body, signal and the two timeouts, so the sentences for FormData bodies and options it never sets are shortened',
    stubs: [],
    replace: [
      [
        "'body must be a FormData created by this undici package instance; FormData from other sources, such as the built-in FormData provided by Node.js, is not supported'",
        "'FormData body'",
      ],
      ["'maxRedirections is not supported, use the redirect interceptor'", "'maxRedirections'"],
      ["'typeOfService must be an integer between 0 and 255'", "'invalid typeOfService'"],
    ],
  },
]

/** A response body reader edgeop never calls, replaced by one that says so if it ever is. */
const unusedReader = (name: string): DeclarationStub => ({
  kind: 'method',
  name,
  stub: `${name} () { throw new Error('edgeop: undici body.${name.replace(/^(async|get) /, '')} is not bundled') }`,
})

/**
 * A response body's readers other than `text()`: edgeop reads every body with `text()` or by iterating it
 * (`readText` and `readBytes` in src/transport/body-codec.ts), never as JSON, bytes, a Blob, an ArrayBuffer,
 * FormData or a web stream (`body.body`). Cut to pay for the size budget.
 */
export const RESPONSE_BODY_READERS: readonly FileTrim[] = [
  {
    file: 'api/readable.js',
    reason: 'bodies are read with text() or iterated',
    stubs: ['json', 'blob', 'bytes', 'arrayBuffer', 'async formData', 'get body'].map(unusedReader),
  },
]

/** `source` with each stubbed declaration replaced; throws when one is not found exactly once. */
export function applyStubs(source: string, trim: FileTrim): string {
  let out = source
  for (const { kind, name, stub } of trim.stubs) {
    const head =
      kind === 'class' ? `\nclass ${name} ` : kind === 'method' ? `\n  ${name} (` : `\n${kind} ${name} (`
    const close = kind === 'method' ? '\n  }\n' : '\n}\n'
    const start = out.indexOf(head)
    if (start < 0 || out.indexOf(head, start + 1) >= 0)
      throw new Error(`undici trim: ${trim.file} has no single \`${head.trim()}\` (undici layout changed?)`)
    const end = out.indexOf(close, start)
    if (end < 0) throw new Error(`undici trim: ${trim.file}: \`${name}\` has no closing line`)
    out = `${out.slice(0, start + 1)}${stub}${out.slice(end + close.length - 1)}`
  }
  for (const [from, to] of trim.replace ?? []) {
    const at = out.indexOf(from)
    if (at < 0 || out.indexOf(from, at + 1) >= 0)
      throw new Error(`undici trim: ${trim.file} has no single \`${from}\` (undici layout changed?)`)
    out = `${out.slice(0, at)}${to}${out.slice(at + from.length)}`
  }
  return out
}

/** An esbuild plugin applying `trims` to the undici files they name (several trims may name one file). */
export function undiciTrims(name: string, trims: readonly FileTrim[]): esbuild.Plugin {
  return {
    name,
    setup(b) {
      for (const file of new Set(trims.map((t) => t.file))) {
        const filter = new RegExp(
          `undici[\\\\/]lib[\\\\/]${file.replaceAll('.', '\\.').replaceAll('/', '[\\\\/]')}$`,
        )
        b.onLoad({ filter }, async (args) => ({
          contents: trims
            .filter((t) => t.file === file)
            .reduce((source, trim) => applyStubs(source, trim), await readFile(args.path, 'utf8')),
          loader: 'js',
        }))
      }
    },
  }
}

/**
 * undici's well-known header-name tables (`core/constants.js`: ~100 names with their lowercase forms;
 * `core/tree.js`: a search tree over them) only save a `toLowerCase()` per header: every lookup
 * falls back to exactly that when a name is not in the table (`util.headerNameToString`,
 * `util.bufferToLowerCasedHeaderName`, `Request`'s `processHeader`, which then checks the name is an
 * HTTP token: the well-known names all are). Replaced by empty tables, every header name takes the
 * fallback, with the same result. The WebSocket defaults the module also exports are copied from the
 * real module at build time.
 */
export const HEADER_NAME_TABLES: esbuild.Plugin = {
  name: 'undici-header-name-tables',
  setup(b) {
    b.onLoad({ filter: /undici[\\/]lib[\\/]core[\\/]constants\.js$/ }, (args) => {
      const real = createRequire(import.meta.url)(args.path) as Record<string, unknown>
      const { defaultWebSocketMaxFragments, defaultWebSocketMaxPayloadSize } = real
      return {
        contents: `module.exports = { wellknownHeaderNames: [], headerNameLowerCasedRecord: Object.create(null), defaultWebSocketMaxFragments: ${JSON.stringify(defaultWebSocketMaxFragments)}, defaultWebSocketMaxPayloadSize: ${JSON.stringify(defaultWebSocketMaxPayloadSize)} }`,
        loader: 'js',
      }
    })
    b.onLoad({ filter: /undici[\\/]lib[\\/]core[\\/]tree\.js$/ }, () => ({
      contents: 'module.exports = { tree: { lookup: () => undefined } }',
      loader: 'js',
    }))
  },
}

/**
 * undici's `Client` constructor validates each of its ~30 options with a sentence (1.5 KB in all). In the
 * artifact every option is a constant of src/transport/connection-pool.ts (25 connections, the keep-alive,
 * `allowH2` and the connector), so no message can be thrown; each is shortened to `invalid <option>`,
 * which still names the option if one ever is (with it goes the deprecation warning for an h2 option
 * passed outside `h2Options`, which only an invalid value triggers). Cut to pay for the size budget.
 */
export const CLIENT_OPTION_MESSAGES: esbuild.Plugin = {
  name: 'undici-client-option-messages',
  setup(b) {
    b.onLoad({ filter: /undici[\\/]lib[\\/]dispatcher[\\/]client\.js$/ }, async (args) => {
      const source = applyStubs(await readFile(args.path, 'utf8'), {
        file: 'dispatcher/client.js',
        reason: 'warns only before an invalid option is thrown',
        stubs: [noop('emitH2OptionsNamespaceWarning')],
      })
      let count = 0
      const contents = source.replace(/new InvalidArgumentError\('([^']*)'\)/g, (_, message: string) => {
        count++
        return `new InvalidArgumentError('invalid ${shortOptionName(message)}')`
      })
      if (count < 20)
        throw new Error(`undici trim: client.js has ${count} option messages, expected 30 (layout changed?)`)
      return { contents, loader: 'js' }
    })
  },
}

/** The option a `Client` option message names: its first word, or the second after `invalid`/`unsupported`. */
export function shortOptionName(message: string): string {
  const words = message.split(/[\s,]+/)
  return (/^(invalid|unsupported)$/.test(words[0]!) ? words[1] : words[0]) ?? message
}
