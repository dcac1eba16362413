/**
 * The operator as one file, dist/operator.mjs: everything it imports bundled and minified. The
 * `edgeop()` plugin lets undici load in an ESM bundle and leaves out the parts of it edgeop never runs.
 */

import { edgeop } from 'edgeop/esbuild'
import * as esbuild from 'esbuild'

const result = await esbuild.build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/operator.mjs',
  bundle: true,
  minify: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  legalComments: 'none',
  metafile: true,
  plugins: [edgeop()],
})
const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0)
console.log(`dist/operator.mjs: ${bytes} bytes`)
