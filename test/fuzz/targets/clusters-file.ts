/**
 * @module clusters-file — fuzz target: the operator's `--clusters-file` (`readClustersFile`, each reference
 * split by `clusterRef`).
 *
 * Answered: clusters whose names are DNS-1123 labels and whose kubeconfig paths are absolute, or an
 * `EdgeopError` `EDGEOP_ERR_CONFIG`.
 */
import { dirname, isAbsolute } from 'node:path'
import { clusterRef, readClustersFile } from '../../../src/operator/clusters-file.ts'
import { allowOnly, Finding, type FuzzTarget, fileSession } from '../harness.ts'

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/

export const clustersFile: FuzzTarget = {
  name: 'clusters-file',
  entry: 'readClustersFile, then clusterRef of every reference',
  dictionary: [
    '\n',
    '\r\n',
    '=',
    ':',
    '#',
    ' ',
    '\t',
    '-',
    'a'.repeat(63),
    '__proto__=',
    'constructor=',
    '../',
    '/',
    '\u0000',
    'é',
  ],
  maxBytes: 16 * 1024,
  open: () =>
    fileSession('clusters', async (file) => {
      let clusters: Record<string, string>
      try {
        clusters = await readClustersFile(file)
      } catch (err) {
        return allowOnly(err, ['EDGEOP_ERR_CONFIG'])
      }
      for (const [name, ref] of Object.entries(clusters)) {
        if (!DNS_LABEL.test(name))
          throw new Finding(`a cluster name that is no DNS-1123 label: ${JSON.stringify(name)}`)
        if (!isAbsolute(clusterRef(ref, dirname(file)).kubeconfig))
          throw new Finding(`a relative kubeconfig path from ${JSON.stringify(ref)}`)
      }
    }),
}
