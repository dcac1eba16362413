/**
 * @module namespace — a fresh namespace per test, so tests sharing one apiserver never see each
 * other's objects.
 *
 * Namespaces are not deleted afterwards: without kube-controller-manager's namespace controller (a
 * test environment runs only etcd and kube-apiserver, like envtest) a deleted namespace stays
 * `Terminating` forever. Unique names make that harmless.
 */
import { randomBytes } from 'node:crypto'
import type { KubeClient } from '../client/kube-client.ts'
import { CORE_TYPES } from '../client/resource.ts'

/** Label on every namespace made here, so a person looking at a shared cluster can find them. */
export const TEST_NAMESPACE_LABEL = 'edgeop.dev/test'

/** Longest prefix kept: with `-` and 8 hex digits the name stays well within a 63-character label. */
const MAX_PREFIX_LENGTH = 40

/** `<prefix>-<8 random hex>`, the prefix reduced to a DNS-1123 label (`test` when nothing is left). */
export function testNamespaceName(prefix = 'test'): string {
  const clean = prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, MAX_PREFIX_LENGTH)
    .replace(/^-+|-+$/g, '')
  return `${clean === '' ? 'test' : clean}-${randomBytes(4).toString('hex')}`
}

/** Creates namespace {@link testNamespaceName}`(prefix)`, labelled {@link TEST_NAMESPACE_LABEL}; returns its name. */
export async function createTestNamespace(client: KubeClient, prefix?: string): Promise<string> {
  const name = testNamespaceName(prefix)
  await client.resource(CORE_TYPES.namespaces).create({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { [TEST_NAMESPACE_LABEL]: 'true' } },
  })
  return name
}
