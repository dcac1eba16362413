/**
 * @module build/sea-main — the single executable's main script (build/sea.ts). It runs the
 * artifact, embedded as the SEA asset `edgeop.cjs`, from a V8 code cache embedded as the asset
 * `edgeop.code-cache`.
 *
 * Why not the SEA's own `useCodeCache`: Node makes that cache right after compiling the script,
 * so it holds only the top-level code; every function the start-up runs is still compiled lazily.
 * This cache is made after the artifact has run `version` (its whole module initialisation), by
 * the target's own Node under the flags the executable runs with (build/node-flags.ts):
 *
 *     node <NODE_FLAGS> build/sea-main.cjs <artifact> <cache file> version
 *
 * Measured 2026-12-01, 40 interleaved runs of `version` each, CPU time (median): 92 ms with this
 * cache, 105 ms with `useCodeCache`, 109 ms for node + the bundle with Node's compile cache.
 *
 * V8 rejects a cache made by another V8 or under other flags; the executable then compiles from
 * source and says so on stderr (which build/sea.ts refuses to ship). `NODE_DEBUG=edgeop` reports
 * an accepted cache.
 */
'use strict'
const { readFileSync, writeFileSync } = require('node:fs')
const { dirname } = require('node:path')
const { debuglog } = require('node:util')
const { Script } = require('node:vm')
const sea = require('node:sea')

/**
 * The artifact as a CommonJS function body. Identical when the cache is made and when it is used:
 * V8 checks the source (by its length) before accepting a cache.
 */
const wrap = (source) => `(function (exports, require, module, __filename, __dirname) {${source}\n})`

/** Runs the compiled artifact as the module `filename`, with this script's (built-in) `require`. */
function run(script, filename) {
  const module = { exports: {} }
  script.runInThisContext()(module.exports, require, module, filename, dirname(filename))
}

if (sea.isSea()) {
  const cachedData = new Uint8Array(sea.getAsset('edgeop.code-cache'))
  const script = new Script(wrap(sea.getAsset('edgeop.cjs', 'utf8')), {
    filename: process.execPath,
    cachedData,
  })
  if (script.cachedDataRejected) {
    process.stderr.write(
      'edgeop: V8 rejected the embedded code cache (made by another Node or under other V8 flags); compiling from source\n',
    )
  } else {
    debuglog('edgeop')('V8 code cache accepted (%d bytes)', cachedData.length)
  }
  run(script, process.execPath)
} else {
  const [artifact, out, ...args] = process.argv.slice(2)
  if (artifact === undefined || out === undefined) {
    process.stderr.write('usage: node <flags> build/sea-main.cjs <artifact> <cache file> [args…]\n')
    process.exit(2)
  }
  const script = new Script(wrap(readFileSync(artifact, 'utf8')), { filename: artifact })
  process.argv = [process.argv[0], artifact, ...args]
  // At exit every function the run compiled is in the cache, not only the top level.
  process.on('exit', () => writeFileSync(out, script.createCachedData()))
  run(script, artifact)
}
