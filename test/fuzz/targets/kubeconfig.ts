/**
 * @module kubeconfig — fuzz target: kubeconfig files (the YAML subset parser, the schema, the merge and
 * context resolution), read from a file as `loadClusterConfig` reads them. Credentials are resolved only
 * as far as `resolveContext` goes: no exec plugin runs and no token or certificate file is read.
 *
 * Answered: a resolved context or an `EdgeopError` `EDGEOP_ERR_YAML` / `EDGEOP_ERR_CONFIG`.
 */
import { resolveContext } from '../../../src/config/kubeconfig-context.ts'
import {
  type KubeconfigSet,
  mergeKubeconfigs,
  readKubeconfigFiles,
} from '../../../src/config/kubeconfig-files.ts'
import { allowOnly, attempt, type FuzzTarget, fileSession } from '../harness.ts'

/** YAML block and flow syntax, anchors and aliases, and the kubeconfig's field names. */
const YAML_DICTIONARY: readonly string[] = [
  '\n', '\n  ', '\n    ', '- ', ': ', ':', '#', '---\n', '...\n', '|\n', '|-\n', '>\n', '"', "'", '\\', '\t', '{', '}', '[',
  ']', ', ', '&a ', '*a', '&b [*a, *a, *a, *a]', '<<: ', '!!binary ', '!', '%YAML 1.2\n', '? ', 'null', '~', '0x',
  'apiVersion: v1\n', 'kind: Config\n', 'current-context: ', 'contexts:\n', 'clusters:\n', 'users:\n',
  '- name: ', 'context:\n', 'cluster: ', 'user: ', 'namespace: ', 'server: ', 'https://', 'certificate-authority-data: ',
  'client-certificate-data: ', 'client-key-data: ', 'token: ', 'tokenFile: ', 'username: ', 'password: ',
  'exec:\n', 'command: ', 'args: ', 'env: ', 'apiVersion: client.authentication.k8s.io/v1\n', 'auth-provider:\n',
  'as: ', 'proxy-url: ', 'tls-server-name: ', 'insecure-skip-tls-verify: true', 'extensions:\n',
] // biome-ignore format: a word list

export const kubeconfig: FuzzTarget = {
  name: 'kubeconfig',
  entry: 'readKubeconfigFiles → mergeKubeconfigs → resolveContext (current and every named context)',
  dictionary: YAML_DICTIONARY,
  maxBytes: 16 * 1024,
  open: () =>
    fileSession('config', async (file) => {
      let set: KubeconfigSet
      try {
        set = mergeKubeconfigs(await readKubeconfigFiles([file]))
      } catch (err) {
        return allowOnly(err, ['EDGEOP_ERR_YAML', 'EDGEOP_ERR_CONFIG'])
      }
      for (const name of [undefined, ...set.contexts.keys()])
        await attempt(['EDGEOP_ERR_CONFIG'], () => resolveContext(set, name))
    }),
}
