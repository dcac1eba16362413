/** @module esbuild — bundle-time helpers for programs that import edgeop: the `edgeop()` esbuild plugin and its parts. */
export { ESM_REQUIRE_BANNER } from './esm-require-banner.ts'
export { type EdgeopPluginOptions, edgeop } from './plugin.ts'
export { noFormData, noHttp1Client, UNBUNDLED_HTTP1, UNDICI_DEFINE, UNDICI_TRIMS } from './undici-trims.ts'
