/**
 * @module undici-trims — the undici modules edgeop never runs, replaced at bundle time (esbuild plugins).
 *
 * undici is CommonJS without `sideEffects`, so a bundler keeps every module its pool can
 * reach, including lazily required ones edgeop never calls. Each plugin here swaps one such
 * module for a small stand-in, and fails loudly where the stand-in is reached after all.
 * Sizes are minified bytes in edgeop's own artifact (dist/edgeop.cjs), measured with esbuild
 * 0.28 on undici 8.13.
 *
 * These plugins match undici file paths; test/transport/undici-layout.test.ts pins the files,
 * so an undici release that moves them fails the tests instead of silently bundling more.
 */
import type { Plugin } from 'esbuild'

/**
 * The message of an HTTP/1.1 connection handed to undici in a trimmed bundle. None is: edgeop's
 * client sends HTTP/1.1 through `node:http`, and its undici connector fails any TLS connection
 * on which ALPN did not select h2 before undici sees it.
 */
export const UNBUNDLED_HTTP1 =
  'edgeop: undici HTTP/1.1 is not bundled (edgeop sends HTTP/1.1 through node:http)'

/**
 * undici's HTTP/1.1 client (`dispatcher/client-h1.js`, 15 KB minified) becomes a function that
 * throws {@link UNBUNDLED_HTTP1}. With it go the modules only it loads: the llhttp WebAssembly
 * parser (54 KB SIMD, 72 KB fallback), its constants and, where undici has it, the experimental
 * Milo parser. undici calls it only for a connection whose ALPN protocol is not h2, and undici
 * catches the throw and fails that connection's requests with it.
 */
export const noHttp1Client: Plugin = {
  name: 'edgeop-undici-no-http1-client',
  setup(b) {
    b.onLoad({ filter: /undici[\\/]lib[\\/]dispatcher[\\/]client-h1\.js$/ }, () => ({
      contents: `module.exports = function connectH1 () { throw new Error(${JSON.stringify(UNBUNDLED_HTTP1)}) }`,
      loader: 'js',
    }))
  },
}

/**
 * undici's WHATWG layer (FormData, webidl, fetch body mixins: ~38 KB) is reached from the
 * pool only through lazy requires for FormData request bodies. edgeop sends strings only,
 * so those three entry points are replaced: nothing is FormData, and extracting a
 * FormData body fails loudly instead of silently.
 */
export const noFormData: Plugin = {
  name: 'edgeop-undici-no-formdata',
  setup(b) {
    b.onLoad({ filter: /undici[\\/]lib[\\/]web[\\/]fetch[\\/]formdata\.js$/ }, () => ({
      contents: 'module.exports = {}',
      loader: 'js',
    }))
    b.onLoad({ filter: /undici[\\/]lib[\\/]web[\\/]webidl[\\/]index\.js$/ }, () => ({
      contents: 'module.exports = { webidl: { is: { FormData: () => false } } }',
      loader: 'js',
    }))
    b.onLoad({ filter: /undici[\\/]lib[\\/]web[\\/]fetch[\\/]body\.js$/ }, () => ({
      contents:
        "module.exports = { extractBody () { throw new Error('edgeop: FormData request bodies are not supported') } }",
      loader: 'js',
    }))
  },
}

/** Both trims, in the order edgeop's artifact applies them. */
export const UNDICI_TRIMS: readonly Plugin[] = [noHttp1Client, noFormData]

/**
 * undici's own bundler switch (`typeof esbuildDetection`, the one Node core uses when it bundles
 * undici): its HTTP/1.1 client then leaves out the experimental Milo parser, and its fetch reads
 * it too. With {@link noHttp1Client} the HTTP/1.1 client is not bundled at all; the define stays
 * so that a bundle keeps undici's bundled-mode behaviour wherever undici reads it.
 */
export const UNDICI_DEFINE: Readonly<Record<string, string>> = { esbuildDetection: '"edgeop"' }
