/**
 * @module kube — edgeop clients for the integration tests' control plane.
 */

import { KubeClient } from '../../src/client/kube-client.ts'
import type { ClusterConfig } from '../../src/config/cluster-config.ts'
import type { TransportOptions } from '../../src/transport/transport.ts'

/** What a client needs from the test environment. */
export interface TestCluster {
  caPem: string
  admin: { certPem: string; keyPem: string }
}

/** A ClusterConfig for the admin identity at `server` (the apiserver or a fault proxy). */
export function adminConfig(env: TestCluster, server: string): ClusterConfig {
  return {
    server,
    tls: { ca: env.caPem, cert: env.admin.certPem, key: env.admin.keyPem, insecureSkipVerify: false },
    namespace: 'default',
    source: `test admin at ${server}`,
  }
}

/** An admin client with client-side throttling off (envtest uses 1000/2000). */
export function adminClient(env: TestCluster, server: string, options: TransportOptions = {}): KubeClient {
  return new KubeClient(adminConfig(env, server), { qps: -1, ...options })
}

/** A client for a client-certificate user (e.g. from `env.userKubeconfig`), throttling off. */
export function userClient(
  env: Pick<TestCluster, 'caPem'>,
  server: string,
  user: { name: string; certPem: string; keyPem: string },
  namespace = 'default',
): KubeClient {
  return new KubeClient(
    {
      server,
      tls: { ca: env.caPem, cert: user.certPem, key: user.keyPem, insecureSkipVerify: false },
      namespace,
      source: `test user ${user.name}`,
    },
    { qps: -1 },
  )
}
