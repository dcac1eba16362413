/**
 * The package root (`edgeop`, src/index.ts) is a hand-picked front door, not every subpath at once. This
 * test pins its names against the list below, each with the reason it is at the root, so adding one
 * needs a reason someone reviewed; everything else stays on its subpath. The ceiling keeps the root
 * the size of controller-runtime's `alias.go` (about 19 names) or kube-rs's `lib.rs` (about 13).
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'
import { ROOT } from '../../build/artifact.ts'

/** Most names the root may hold. */
const MAX_ROOT_NAMES = 30

/** Every name of the root, with why an operator's first file needs it. */
const ROOT_NAMES: Readonly<Record<string, string>> = {
  // Connecting and addressing
  loadClusterConfig: 'the one call from kubeconfig, in-cluster or KUBECONFIG to a connection',
  KubeClient: 'the connection every other part takes',
  ResourceClient: 'what `client.resource(type)` returns: get, list, create, patch, apply',
  ResourceType: 'how a user declares a typed resource of their own CRD',
  CORE_TYPES: 'the typed built-in resources (Pods, Deployments, ConfigMaps, …)',
  KubeObject: 'the base type every object type extends',
  // Errors a reconcile checks
  ApiError: 'the error every API call throws, with the status and reason',
  isNotFound: 'the check of a get or delete that found nothing',
  isConflict: 'the check of a write that lost a race',
  // Watching
  InformerFactory: '`manager.factory`: where informers come from',
  SharedInformer: 'an informer and its store, as controllers read them',
  // Reconciling
  Controller: 'what `manager.controller(...)` returns and examples type their registration with',
  Reconciler: 'the function a user writes',
  ReconcileContext: 'what the reconciler is given',
  ReconcileResult: 'what the reconciler returns (requeue or done)',
  TerminalError: 'how a reconciler says "do not retry"',
  // Running
  Manager: 'holds the client, informers and controllers, leader election and the ops server',
  ManagerOptions: 'its options',
  onShutdownSignals: 'a graceful stop on SIGINT and SIGTERM for `manager.run`',
  createLogger: 'the structured logger the manager and the controllers log through',
  // Writing objects
  applyIfDrifted: 'server-side apply of a child only when it differs',
  withControllerReference: 'owns a child so its changes and deletion reach the owner',
  setCondition: 'a status condition set the Kubernetes way',
  updateStatusIfChanged: 'a status write only when it changed',
  finalize: 'cleanup of an external resource before deletion',
  customResourceDefinition: 'a CRD from a zod schema',
}

/** The names src/index.ts exports: it only re-exports explicit lists (`export { … } from`). */
async function rootNames(): Promise<string[]> {
  const text = (await readFile(`${ROOT}/src/index.ts`, 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '')
  assert.ok(!/export\s+\*/.test(text), 'src/index.ts re-exports a whole subpath (`export *`)')
  return [...text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}\s+from/g)]
    .flatMap((m) => m[1]!.split(','))
    .map((s) =>
      s
        .trim()
        .replace(/^type\s+/, '')
        .replace(/^.*\s+as\s+/, ''),
    )
    .filter(Boolean)
}

test('the package root holds exactly the reviewed names, each with its reason', async () => {
  const names = await rootNames()
  assert.deepEqual(
    [...names].sort(),
    Object.keys(ROOT_NAMES).sort(),
    'a name was added to or removed from src/index.ts: give it a reason in ROOT_NAMES, or put it on its subpath',
  )
  for (const [name, reason] of Object.entries(ROOT_NAMES))
    assert.ok(reason.length > 10, `${name} has no reason`)
})

test(`the package root stays a front door: at most ${MAX_ROOT_NAMES} names`, async () => {
  const names = await rootNames()
  assert.ok(names.length >= 20 && names.length <= MAX_ROOT_NAMES, `${names.length} names at the root`)
})
