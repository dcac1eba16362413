/**
 * @module plugin — `edgeop()`, the esbuild plugin for bundling an edgeop program the way edgeop bundles its own.
 */
import type { Plugin } from 'esbuild'
import { ESM_REQUIRE_BANNER } from './esm-require-banner.ts'
import { UNDICI_DEFINE, UNDICI_TRIMS } from './undici-trims.ts'

/** Options of {@link edgeop}. */
export interface EdgeopPluginOptions {
  /**
   * Replace the undici modules edgeop never runs (see `UNDICI_TRIMS`). Default true. Turn off
   * when the same bundle also uses undici's fetch, FormData or its HTTP/1.1 client.
   */
  trimUndici?: boolean
  /** Add {@link ESM_REQUIRE_BANNER} to ESM bundles for Node. Default true. */
  esmRequireBanner?: boolean
}

/**
 * An esbuild plugin for programs that import edgeop:
 * - for `format: 'esm'` with `platform: 'node'`, prepends {@link ESM_REQUIRE_BANNER} to
 *   `banner.js` (unless the banner already calls `createRequire`), so undici's
 *   `require('node:…')` calls work in the ESM bundle;
 * - defines `esbuildDetection` (unless already defined) and applies the undici trims of
 *   edgeop's own artifact. It halves the gzipped bundle of the mirror controller of docs/library.md
 *   (`npm run size:library`; the sizes and their date are in docs/library.md#installing-and-bundling).
 *
 * It only changes how undici's modules load; everything else is bundled as without it.
 */
export function edgeop(options: EdgeopPluginOptions = {}): Plugin {
  const trim = options.trimUndici ?? true
  const banner = options.esmRequireBanner ?? true
  return {
    name: 'edgeop',
    setup(b) {
      const o = b.initialOptions
      if (banner && o.format === 'esm' && o.platform === 'node') {
        const js = o.banner?.js ?? ''
        if (!js.includes('createRequire'))
          o.banner = { ...o.banner, js: js ? `${ESM_REQUIRE_BANNER}\n${js}` : ESM_REQUIRE_BANNER }
      }
      if (!trim) return
      o.define = { ...UNDICI_DEFINE, ...o.define }
      for (const p of UNDICI_TRIMS) void p.setup(b)
    },
  }
}
