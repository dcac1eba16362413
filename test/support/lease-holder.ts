/**
 * @module lease-holder — who a Lease in a simulated cluster names as leader, for the write invariants
 * of the operator simulations ("only the Lease holder writes").
 */
import type { KubeObject } from '../../src/core/types.ts'
import type { SimulatedCluster } from '../../src/testing/index.ts'

/** The `holderIdentity` of Lease `namespace/name` in `c`, undefined when there is none. */
export function leaseHolder(c: SimulatedCluster, namespace: string, name: string): string | undefined {
  const lease = c.store.get('coordination.k8s.io/leases', namespace, name) as
    | (KubeObject & { spec?: { holderIdentity?: string } })
    | undefined
  return lease?.spec?.holderIdentity
}
