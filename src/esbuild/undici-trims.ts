/**
 * @module undici-trims — the undici modules edgeop never runs, replaced at bundle time (esbuild plugins).
 *
 * undici is CommonJS without `sideEffects`, so a bundler keeps every module its pool can
 * reach, including lazily required ones edgeop never calls. Each plugin here swaps one such
 * module for a small stand-in, and fails loudly where the stand-in is reached after all.
 * Sizes are minified bytes in edgeop's own artifact (dist/edgeop.cjs), measured with esbuild
 * 0.28 on undici 8.13.
 *
 * These plugins match undici file paths; test/client/undici-layout.test.ts pins the files,
 * so an undici release that moves them fails the tests instead of silently bundling more.
 */
import { createRequire } from 'node:module'
import { brotliCompressSync, constants as zlibConstants } from 'node:zlib'
import type { Plugin } from 'esbuild'

/** Loads a dependency's module at bundle time (absolute path from esbuild's `onLoad`). */
const requireAtBuild = createRequire(import.meta.url)

/**
 * The non-SIMD llhttp WebAssembly fallback (72 KB) becomes a module that throws a clear error:
 * it only loads where WebAssembly SIMD is missing (riscv64, old ppc64), and HTTP/2 connections
 * never load llhttp at all.
 */
export const noSimdFallback: Plugin = {
  name: 'edgeop-llhttp-no-simd-fallback',
  setup(b) {
    b.onLoad({ filter: /llhttp[\\/]llhttp-wasm\.js$/ }, () => ({
      contents:
        "throw new Error('edgeop: this build parses HTTP/1.1 with WebAssembly SIMD; this CPU has none (use HTTP/2 or a full undici build)')",
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

/**
 * undici's HTTP/1.1 client reads only `ERROR` and `TYPE` from llhttp's constants module;
 * the rest (17 KB of parser-generator tables) is dead weight. The replacement is the two
 * objects serialised from the real module at bundle time, so they cannot drift.
 */
export const llhttpConstantsUsedOnly: Plugin = {
  name: 'edgeop-llhttp-constants-used-only',
  setup(b) {
    b.onLoad({ filter: /undici[\\/]lib[\\/]llhttp[\\/]constants\.js$/ }, (args) => {
      const real = requireAtBuild(args.path) as { ERROR: object; TYPE: object }
      return {
        contents: `module.exports = ${JSON.stringify({ ERROR: real.ERROR, TYPE: real.TYPE })}`,
        loader: 'js',
      }
    })
  },
}

/**
 * Brotli quality for the packed llhttp WebAssembly: the maximum, since it is paid once at
 * bundle time (zlib `BROTLI_MAX_QUALITY`).
 */
const WASM_BROTLI_QUALITY = zlibConstants.BROTLI_MAX_QUALITY

/**
 * The llhttp SIMD WebAssembly module ships as base64, which gzip shrinks poorly (54 KB of
 * wasm → 72 KB of base64 → 24 KB gzip). Stored brotli-compressed instead (then base64:
 * 15 KB in a gzipped bundle) and decompressed with Node's own zlib the first time an
 * HTTP/1.1 connection needs the parser, exactly as lazily as before.
 */
export const llhttpBrotli: Plugin = {
  name: 'edgeop-llhttp-simd-brotli',
  setup(b) {
    b.onLoad({ filter: /llhttp[\\/]llhttp_simd-wasm\.js$/ }, (args) => {
      const wasm = requireAtBuild(args.path) as Buffer
      const packed = brotliCompressSync(wasm, {
        params: {
          [zlibConstants.BROTLI_PARAM_QUALITY]: WASM_BROTLI_QUALITY,
          [zlibConstants.BROTLI_PARAM_SIZE_HINT]: wasm.length,
        },
      }).toString('base64')
      return {
        contents: `let w; Object.defineProperty(module, 'exports', { get: () => w ??= require('node:zlib').brotliDecompressSync(Buffer.from('${packed}', 'base64')) })`,
        loader: 'js',
      }
    })
  },
}

/** All four trims, in the order edgeop's artifact applies them. */
export const UNDICI_TRIMS: readonly Plugin[] = [
  noSimdFallback,
  noFormData,
  llhttpConstantsUsedOnly,
  llhttpBrotli,
]

/**
 * The `define` that makes undici leave out its experimental Milo HTTP/1.1 parser: undici
 * checks `typeof esbuildDetection` (its own switch, the one Node core uses when it bundles
 * undici; lib/dispatcher/client-h1.js).
 */
export const UNDICI_DEFINE: Readonly<Record<string, string>> = { esbuildDetection: '"edgeop"' }
