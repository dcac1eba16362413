/**
 * @module clusters-file — `--clusters-file`: the member clusters, one `name=kubeconfig[:context]` per
 * line (`#` starts a comment), re-read while the operator runs so that the list can change.
 */
import { resolve } from 'node:path'
import {
  type Clock,
  EdgeopError,
  errorMessage,
  isEdgeopError,
  type Logger,
  readBoundedText,
  realClock,
  sleep,
} from '../core/index.ts'
import type { ClusterSet } from '../manager/index.ts'

/**
 * 10 s between reads of the clusters file. A mounted ConfigMap changes about a minute after its
 * update (the kubelet's sync period), so reading faster gains nothing; a read is one small file.
 */
export const CLUSTERS_FILE_POLL_MS = 10_000

/**
 * Cap of the clusters file: 1 MiB. A line is a name and a path, under 300 bytes, so this holds
 * thousands of clusters; a mounted ConfigMap holds at most 1 MiB in all (the apiserver's limit).
 */
export const MAX_CLUSTERS_FILE_BYTES = 1024 * 1024

/**
 * Pure: the clusters of a clusters file, name → reference (`kubeconfig[:context]`). Throws
 * `EDGEOP_ERR_CONFIG` naming the first line that is not `name=reference` with a new DNS-1123 label
 * as its name.
 */
export function parseClusterList(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim()
    if (!line || line.startsWith('#')) continue
    const m = /^([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)=(.+)$/.exec(line)
    if (!m || Object.hasOwn(out, m[1]!))
      throw new EdgeopError(
        'EDGEOP_ERR_CONFIG',
        `clusters file line ${i + 1}: expected name=kubeconfig[:context], names unique DNS-1123 labels`,
        { step: 'read clusters file' },
      )
    out[m[1]!] = m[2]!
  }
  return out
}

/**
 * Pure: the kubeconfig path and context of a reference `kubeconfig[:context]` (split at the first
 * `:`, as contexts such as EKS ARNs hold colons), the path relative to `dir`.
 */
export function clusterRef(ref: string, dir: string): { kubeconfig: string; context?: string } {
  const i = ref.indexOf(':')
  return i < 0
    ? { kubeconfig: resolve(dir, ref) }
    : { kubeconfig: resolve(dir, ref.slice(0, i)), context: ref.slice(i + 1) }
}

/**
 * The clusters of the file at `path` (see {@link parseClusterList}), read bounded (at most
 * {@link MAX_CLUSTERS_FILE_BYTES}, UTF-8, within core's read time limit); a file that cannot be read
 * throws `EDGEOP_ERR_CONFIG` naming it and the reason or the limit.
 */
export async function readClustersFile(path: string): Promise<Record<string, string>> {
  let text: string
  try {
    text = await readBoundedText(path, { what: 'clusters file', maxBytes: MAX_CLUSTERS_FILE_BYTES })
  } catch (err) {
    if (isEdgeopError(err, 'EDGEOP_ERR_FILE'))
      throw new EdgeopError('EDGEOP_ERR_CONFIG', err.message, { step: 'read clusters file', cause: err })
    const why = (err as { code?: string }).code ?? errorMessage(err)
    throw new EdgeopError('EDGEOP_ERR_CONFIG', `clusters file ${path}: cannot read it (${why})`, {
      step: 'read clusters file',
      cause: err,
    })
  }
  return parseClusterList(text)
}

/**
 * Re-reads `path` into `clusters` every 10 s ({@link CLUSTERS_FILE_POLL_MS}) until `signal` aborts (the
 * first read is the caller's, which fails start-up on a bad file). A file that cannot be read or
 * parsed later is logged and the members stay as they are.
 */
export async function followClustersFile(
  path: string,
  clusters: Pick<ClusterSet, 'update'>,
  log: Logger,
  signal: AbortSignal,
  clock: Clock = realClock,
): Promise<void> {
  for (;;) {
    await sleep(CLUSTERS_FILE_POLL_MS, clock, signal).catch(() => {})
    if (signal.aborted) return
    try {
      await clusters.update(await readClustersFile(path))
    } catch (err) {
      log.error('cannot read the clusters file', { path, error: errorMessage(err) })
    }
  }
}
