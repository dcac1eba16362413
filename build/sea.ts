/**
 * @module build/sea — `npm run build:sea`: dist/edgeop, a Node single executable application, per architecture.
 *
 * Node 24 has no `--build-sea`, so this is the blob + postject flow (edge-facts §1.2):
 * 1. build dist/edgeop.cjs and dist/edgeop.unpacked.cjs (the same program, its packed code as plain
 *    source: build/artifact.ts UNPACKED_ARTIFACT);
 * 2. run it once through build/sea-main.cjs under the shipped V8 flags, which writes a V8 code
 *    cache of everything its start compiled; `node --experimental-sea-config` makes the blob:
 *    build/sea-main.cjs as the main script, the artifact and that cache as assets (the main
 *    script's header says why this, not the SEA's `useCodeCache`, and what it measured);
 * 3. copy the Node 24 binary and strip it **before** injection (−17 MB host, −19 MB arm64;
 *    stripping after injection corrupts the ELF and the binary segfaults);
 * 4. postject injects the blob; then `<executable> version` must run with a silent stderr.
 * A V8 startup snapshot (`useSnapshot`) is not possible: Node 24.21 cannot snapshot `node:http`
 * and `node:http2` (the snapshot builder aborts on their bindings), which the artifact loads.
 * The code cache is platform-specific, so each architecture's blob is made by that
 * architecture's Node: on the host directly (dist/edgeop), for the other architecture (arm64
 * on an amd64 host: dist/edgeop-linux-arm64) under qemu with build/targets.ts — the same
 * blob + postject flow on the npm platform package's binary, so the code cache is kept.
 *
 *     node build/sea.ts [--arch=amd64|arm64]…   (default: every architecture)
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { chmod, copyFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { buildArtifact, ROOT, UNPACKED_ARTIFACT } from './artifact.ts'
import { NODE_FLAGS } from './node-flags.ts'
import { ARCHES, type Arch, commandFor, HOST_ARCH, nodeBinary, stripBinary } from './targets.ts'

/** The single executable's main script: runs the embedded artifact from the embedded code cache. */
export const SEA_MAIN = join(ROOT, 'build/sea-main.cjs')

/** postject's sentinel for Node's SEA fuse (documented in Node's single-executable docs). */
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'

/** Where the single executable for `arch` is written: dist/edgeop for the host, dist/edgeop-linux-<arch> otherwise. */
export const seaPath = (arch: Arch): string =>
  join(ROOT, arch === HOST_ARCH ? 'dist/edgeop' : `dist/edgeop-linux-${arch}`)

/** Runs `argv` (a binary for `arch`) on this machine, capturing its output. */
function runFor(arch: Arch, argv: string[]) {
  const [cmd, ...args] = commandFor(arch, argv)
  return spawnSync(cmd!, args, { encoding: 'utf8' })
}

/** Builds the single executable for `arch` from dist/edgeop.cjs; returns its path. Exits on failure. */
export async function buildSea(arch: Arch): Promise<string> {
  const started = performance.now()
  const out = seaPath(arch)
  const blob = `${out}.blob`
  const config = `${out}.sea-config.json`
  const codeCache = `${out}.code-cache`
  // The artifact unpacked (build/artifact.ts UNPACKED_ARTIFACT), so the code cache covers edgeop's code.
  const source = UNPACKED_ARTIFACT
  const node = await nodeBinary(arch)
  // The code cache is made by the target's own V8, under the flags the executable runs with,
  // or V8 rejects it at start.
  const cached = runFor(arch, [node, ...NODE_FLAGS, SEA_MAIN, source, codeCache, 'version'])
  if (cached.status !== 0 || cached.stderr !== '') {
    process.stderr.write(
      `build:sea ${arch}: making the code cache exited ${cached.status}:\n${cached.stderr}`,
    )
    process.exit(1)
  }
  await writeFile(
    config,
    JSON.stringify({
      main: SEA_MAIN,
      output: blob,
      disableExperimentalSEAWarning: true,
      // The main script is 2 KB; the artifact's cache is the asset below.
      useCodeCache: false,
      assets: { 'edgeop.cjs': source, 'edgeop.code-cache': codeCache },
      execArgv: NODE_FLAGS,
      // NODE_OPTIONS still applies (operators tune the heap with it in pod specs).
      execArgvExtension: 'env',
    }),
  )
  const made = runFor(arch, [node, ...NODE_FLAGS, '--experimental-sea-config', config])
  if (made.status !== 0) {
    process.stderr.write(`build:sea ${arch}: making the blob exited ${made.status}:\n${made.stderr}`)
    process.exit(1)
  }
  await rm(out, { force: true })
  await copyFile(node, out)
  await chmod(out, 0o755)
  const stripped = stripBinary(arch, out)
  if (!stripped) {
    process.stderr.write(`build:sea ${arch}: no working strip for this ELF: the binary stays unstripped\n`)
  }
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/postject/dist/cli.js'), out, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', FUSE],
    // postject warns about note sections of stripped binaries on stderr; the run below is the check.
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  const ran = runFor(arch, [out, 'version'])
  // Anything on stderr (e.g. build/sea-main.cjs saying V8 rejected the code cache when the blob
  // and the binary disagree on V8 flags) would greet every start of the operator: refuse to ship it.
  if (ran.status !== 0 || ran.stderr !== '') {
    process.stderr.write(`build:sea: ${out} version exited ${ran.status}; stderr:\n${ran.stderr}`)
    process.exit(1)
  }
  const { size } = await stat(out)
  process.stdout.write(
    `${out.slice(ROOT.length + 1)} (linux/${arch}): ${size} bytes${stripped ? ' (stripped)' : ''}, runs: ${ran.stdout.trim()} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
  )
  return out
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const asked = process.argv.slice(2).map((a) => /^--arch=(amd64|arm64)$/.exec(a)?.[1])
  if (asked.some((a) => a === undefined)) {
    process.stderr.write('usage: node build/sea.ts [--arch=amd64|arm64]…\n')
    process.exit(2)
  }
  await buildArtifact()
  for (const arch of asked.length > 0 ? (asked as Arch[]) : ARCHES) await buildSea(arch)
}
