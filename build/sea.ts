/**
 * @module build/sea — `npm run build:sea`: dist/edgeop, a Node single executable application.
 *
 * Node 24 has no `--build-sea`, so this is the blob + postject flow (edge-facts §1.2):
 * 1. build dist/edgeop.cjs (the same artifact `node dist/edgeop.cjs` runs);
 * 2. `node --experimental-sea-config` makes the blob with a V8 code cache (≈10 ms faster start);
 * 3. copy this Node 24 binary and `strip` it **before** injection (−17 MB; stripping after
 *    injection corrupts the ELF and the binary segfaults);
 * 4. postject injects the blob; then `dist/edgeop version` must run.
 * The code cache is platform-specific: build on the target OS/arch.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { chmod, copyFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { buildArtifact, ROOT } from './artifact.ts'
import { NODE_FLAGS } from './node-flags.ts'

const OUT = join(ROOT, 'dist/edgeop')
const BLOB = join(ROOT, 'dist/edgeop.blob')
const CONFIG = join(ROOT, 'dist/sea-config.json')
/** postject's sentinel for Node's SEA fuse (documented in Node's single-executable docs). */
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'

const started = performance.now()
await buildArtifact()
await writeFile(
  CONFIG,
  JSON.stringify({
    main: join(ROOT, 'dist/edgeop.cjs'),
    output: BLOB,
    disableExperimentalSEAWarning: true,
    useCodeCache: true,
    execArgv: NODE_FLAGS,
    // NODE_OPTIONS still applies (operators tune the heap with it in pod specs).
    execArgvExtension: 'env',
  }),
)
// The code cache is made under the flags the executable runs with, or V8 rejects it at start.
execFileSync(process.execPath, [...NODE_FLAGS, '--experimental-sea-config', CONFIG], { stdio: 'inherit' })
await rm(OUT, { force: true })
await copyFile(process.execPath, OUT)
await chmod(OUT, 0o755)
let stripped = true
try {
  execFileSync('strip', [OUT])
} catch {
  stripped = false
  process.stderr.write(
    'build:sea: `strip` (binutils) not found: the binary stays unstripped (about 17 MB larger)\n',
  )
}
execFileSync(
  process.execPath,
  [join(ROOT, 'node_modules/postject/dist/cli.js'), OUT, 'NODE_SEA_BLOB', BLOB, '--sentinel-fuse', FUSE],
  {
    stdio: ['ignore', 'ignore', 'inherit'],
  },
)
const ran = spawnSync(OUT, ['version'], { encoding: 'utf8' })
const version = ran.stdout.trim()
// Anything on stderr (e.g. "Code cache data rejected" when the blob and the binary disagree on
// V8 flags) would greet every start of the operator: refuse to ship it.
if (ran.status !== 0 || ran.stderr !== '') {
  process.stderr.write(`build:sea: ${OUT} version exited ${ran.status}; stderr:\n${ran.stderr}`)
  process.exit(1)
}
const { size } = await stat(OUT)
process.stdout.write(
  `dist/edgeop: ${size} bytes${stripped ? ' (stripped)' : ''}, runs: ${version} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
)
