/**
 * @module bucket-finalizer/main — runs the Bucket controller against the cluster of your kubeconfig,
 * with leader election (only one replica may talk to the storage system at a time):
 *
 *     npm run build
 *     node examples/bucket-finalizer/main.ts crd | kubectl apply -f -
 *     node examples/bucket-finalizer/main.ts
 *
 * The storage system here is the in-memory fake, so buckets live as long as the process; swap in
 * a real `BucketStore` to manage real ones.
 */
import { KubeClient, loadClusterConfig, Manager, onShutdownSignals } from 'edgeop'
import { addBucketController, bucketCrd } from './bucket.ts'
import { InMemoryBucketStore } from './bucket-store.ts'

if (process.argv[2] === 'crd') {
  process.stdout.write(`${JSON.stringify(bucketCrd, null, 2)}\n`)
} else {
  const client = new KubeClient(await loadClusterConfig())
  const manager = new Manager({
    client,
    leaderElection: { name: 'bucket-controller', namespace: client.defaultNamespace },
  })
  addBucketController(manager, new InMemoryBucketStore())
  await manager.run(onShutdownSignals())
  await client.close()
}
