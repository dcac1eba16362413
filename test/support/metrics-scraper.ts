/**
 * @module metrics-scraper — a scraper as Prometheus would be: a ServiceAccount of its own bound to
 * the installed metrics-reader ClusterRole, and its bound token, for scraping an operator whose
 * metrics are served as shipped (HTTPS, every scrape authenticated and authorized).
 */
import { randomBytes } from 'node:crypto'
import type { KubeClient } from '../../src/client/kube-client.ts'
import type { TestEnv } from '../controlplane/env.ts'
import { applyObjects, serviceAccountToken } from './deploy-manifests.ts'
import type { Cleanup } from './test-env.ts'

/** The name of the scraper's ServiceAccount. */
const SCRAPER = 'scraper'

/**
 * Creates the ServiceAccount `scraper` in `namespace`, binds it to the ClusterRole `readerRole`
 * (the binding is removed by a deferred cleanup) and returns a token for it.
 */
export async function metricsScraperToken(
  env: TestEnv,
  admin: KubeClient,
  defer: (...cleanups: Cleanup[]) => void,
  namespace: string,
  readerRole: string,
): Promise<string> {
  const binding = `metrics-reader-${randomBytes(3).toString('hex')}`
  await applyObjects(admin, [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SCRAPER, namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: binding },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: readerRole },
      subjects: [{ kind: 'ServiceAccount', name: SCRAPER, namespace }],
    },
  ])
  defer(() =>
    admin
      .resource(
        {
          group: 'rbac.authorization.k8s.io',
          version: 'v1',
          resource: 'clusterrolebindings',
          namespaced: false,
          kind: 'ClusterRoleBinding',
        },
        undefined,
      )
      .delete(binding),
  )
  return serviceAccountToken(env.server, { caPem: env.caPem, ...env.admin }, namespace, SCRAPER)
}
