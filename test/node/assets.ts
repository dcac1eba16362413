/**
 * @module node/assets — where the real test node's binaries come from: test/node/build-binaries.sh,
 * which uses `EDGEOP_NODE_ASSETS` (prebuilt) or the version-keyed build cache, and builds what is
 * missing from the Go module proxy (versions in test/node/versions.env).
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { buildImages, inspectImage } from '../../build/image.ts'
import { HOST_ARCH } from '../../build/targets.ts'

/** The script that finds or builds the node's binaries and prints their directory on its last stdout line. */
export const BUILD_NODE_BINARIES = join(import.meta.dirname, 'build-binaries.sh')

/** A group of binaries the script builds on its own (`EDGEOP_BUILD_ONLY`); `all` is every one. */
export type NodeBinaryGroup = 'kubelet' | 'containerd' | 'runc' | 'cni' | 'all'

/**
 * The directory holding `group`'s binaries (runc at `<dir>/runc`, the CNI plugins under `<dir>/cni/`),
 * building them on first use. The build's progress and any failure reason (no Go, no C compiler
 * for runc) go to our stderr; a failure rejects with an error naming the script.
 */
export function nodeBinaryDir(group: NodeBinaryGroup, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'bash',
      [BUILD_NODE_BINARIES],
      { encoding: 'utf8', env: { ...env, EDGEOP_BUILD_ONLY: group === 'all' ? '' : group } },
      (err, stdout) => {
        const dir = stdout.trim().split('\n').pop()
        if (err !== null)
          reject(
            new Error(
              `the node's ${group} binaries are unavailable: ${BUILD_NODE_BINARIES} failed (its reason is on stderr above)`,
              { cause: err },
            ),
          )
        else if (dir === undefined || !dir.startsWith('/'))
          reject(
            new Error(
              `the node's ${group} binaries are unavailable: ${BUILD_NODE_BINARIES} printed no absolute path`,
            ),
          )
        else resolve(dir)
      },
    )
    child.stderr?.pipe(process.stderr)
  })
}

/** How long {@link prepareRealNode} may take: the binaries from the Go module proxy on a cold machine (containerd alone took 540 s wall on a loaded one), then the images. */
export const PREPARE_REAL_NODE_TIMEOUT_MS = 1_800_000

/** What probe-node.sh needs before it starts: every node binary, and dist/image's node image (built when missing). */
export async function prepareRealNode(): Promise<void> {
  await nodeBinaryDir('all')
  if ((await inspectImage('node', HOST_ARCH).catch(() => undefined)) === undefined) await buildImages()
}
