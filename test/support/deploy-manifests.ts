/**
 * @module deploy-manifests — the checked-in deploy/*.yaml as a cluster admin applies them:
 * read from the files (not regenerated), in `kubectl apply -f deploy/`'s lexical order, by
 * server-side apply; and a token for the ServiceAccount they ship.
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import type { KubeClient } from '../../src/client/kube-client.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { kubeJson, type TlsIdentity } from '../controlplane/kube-request.ts'

const DEPLOY = join(import.meta.dirname, '../../deploy')

/** Field manager of the tests' applies (kubectl's own would be `kubectl`). */
export const TEST_FIELD_MANAGER = 'edgeop-tests'

/**
 * The YAML files directly in deploy/ (or in its subdirectory `dir`), in the lexical order
 * `kubectl apply -f deploy/` reads them; paths relative to deploy/.
 */
export async function deployYamlFiles(dir = ''): Promise<string[]> {
  const names = (await readdir(join(DEPLOY, dir))).filter((f) => /\.ya?ml$/.test(f)).sort()
  return names.map((f) => (dir ? `${dir}/${f}` : f))
}

/** The objects of one multi-document file in deploy/ (`file` relative to it). */
export async function deployObjects(file: string): Promise<KubeObject[]> {
  const text = await readFile(join(DEPLOY, file), 'utf8')
  return parseAllDocuments(text).map((d) => d.toJS() as KubeObject)
}

/**
 * Server-side applies `objects` in order (forced, so a re-run of the same file takes its fields
 * back), each mapped to its resource by discovery. With `dryRun` the server validates, admits and
 * defaults each object but stores nothing.
 */
export async function applyObjects(
  client: KubeClient,
  objects: readonly KubeObject[],
  options: { dryRun?: boolean } = {},
): Promise<KubeObject[]> {
  const out: KubeObject[] = []
  for (const o of objects) {
    const type = await client.mapper.forApiVersionKind(o.apiVersion!, o.kind!)
    out.push(
      await client
        .resource(type)
        .apply(o, { fieldManager: TEST_FIELD_MANAGER, force: true, dryRun: options.dryRun ?? false }),
    )
  }
  return out
}

/**
 * A bound token for ServiceAccount `namespace/name` (TokenRequest, as the kubelet mounts one into
 * the pod), requested by `admin`. One hour: longer than any test file runs.
 */
export async function serviceAccountToken(
  server: string,
  admin: TlsIdentity,
  namespace: string,
  name: string,
): Promise<string> {
  const path = `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`
  const res = await kubeJson<{ status: { token: string } }>(server, admin, 'POST', path, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  })
  return res.status.token
}
