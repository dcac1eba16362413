/**
 * @module kubeconfig — kubectl-style kubeconfig text for the test control plane.
 *
 * Written by hand (no YAML library): every value is emitted as a JSON string, which
 * is a valid YAML double-quoted scalar, and credentials are inlined as `*-data`
 * fields so a kubeconfig file is self-contained.
 */
import { writeFile } from 'node:fs/promises'

/** Who a kubeconfig authenticates as: a client certificate or a bearer token. */
export type KubeconfigCredentials = { certPem: string; keyPem: string } | { token: string }

/** Input of {@link renderKubeconfig}. */
export interface KubeconfigSpec {
  /** `https://127.0.0.1:<port>` */
  server: string
  /** PEM of the CA that signed the server's certificate. */
  caPem: string
  credentials: KubeconfigCredentials
  /** Name used for the cluster, user and context entries. Default {@link DEFAULT_CONTEXT_NAME}. */
  name?: string
  /** Default namespace of the context. */
  namespace?: string
}

/** Context name when none is given: one cluster, one user, one context. */
export const DEFAULT_CONTEXT_NAME = 'edgeop-test'

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64')
const q = (text: string): string => JSON.stringify(text)

/** Renders a kubeconfig with one cluster, one user and one current context. */
export function renderKubeconfig(spec: KubeconfigSpec): string {
  const name = spec.name ?? DEFAULT_CONTEXT_NAME
  const user =
    'token' in spec.credentials
      ? [`    token: ${q(spec.credentials.token)}`]
      : [
          `    client-certificate-data: ${b64(spec.credentials.certPem)}`,
          `    client-key-data: ${b64(spec.credentials.keyPem)}`,
        ]
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${q(name)}`,
    '  cluster:',
    `    server: ${q(spec.server)}`,
    `    certificate-authority-data: ${b64(spec.caPem)}`,
    'users:',
    `- name: ${q(name)}`,
    '  user:',
    ...user,
    'contexts:',
    `- name: ${q(name)}`,
    '  context:',
    `    cluster: ${q(name)}`,
    `    user: ${q(name)}`,
    ...(spec.namespace === undefined ? [] : [`    namespace: ${q(spec.namespace)}`]),
    `current-context: ${q(name)}`,
    '',
  ].join('\n')
}

/** Writes {@link renderKubeconfig}'s output to `path` with mode 0600 (it holds a private key). */
export async function writeKubeconfig(path: string, spec: KubeconfigSpec): Promise<string> {
  await writeFile(path, renderKubeconfig(spec), { mode: 0o600 })
  return path
}
