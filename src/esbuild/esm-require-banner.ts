/**
 * @module esm-require-banner — gives an ESM bundle a real `require`, for the CommonJS modules inside it.
 *
 * undici is CommonJS and requires Node built-ins (`require('node:assert')`). In an ESM bundle
 * esbuild turns such a require of an external module into a call to its `__require` shim, which
 * throws `Dynamic require of "node:assert" is not supported` because ES modules have no
 * `require` (evanw/esbuild#1921). A module-scope `require` made by `createRequire` is what the
 * shim looks for first; with it the built-ins load as in CommonJS. CJS bundles do not need it.
 */

/**
 * The banner line: add it to esbuild's `banner.js` for `format: 'esm'` on `platform: 'node'`
 * (the {@link edgeop} plugin does). The import is renamed so it cannot clash with user code.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __edgeopCreateRequire } from 'node:module'; const require = __edgeopCreateRequire(import.meta.url);"
