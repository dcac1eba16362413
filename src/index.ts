/** @module edgeop — the front door: the names an operator's first file reaches for; every other name is on its subpath. */
// The rule for this list: a name is here when most operators use it (controller-runtime's alias.go picks
// about 19, kube-rs's lib.rs about 13): the cluster connection and its typed resources, the informer
// factory and its informers, the controller and its reconcile contract, the manager and a graceful stop,
// the logger, the errors every reconcile checks, and the object helpers of a reconcile (apply on drift,
// owner references, conditions, status, finalizers, a CRD from zod). Each name is also on its subpath
// (edgeop/client, edgeop/cache, ...). test/build/root-names.test.ts pins the list with a reason per name,
// so a new name here is a reviewed diff there.
export { InformerFactory, SharedInformer } from './cache/index.ts'
export {
  ApiError,
  CORE_TYPES,
  isConflict,
  isNotFound,
  KubeClient,
  ResourceClient,
  type ResourceType,
} from './client/index.ts'
export { loadClusterConfig } from './config/index.ts'
export {
  Controller,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  TerminalError,
} from './controller/index.ts'
export type { KubeObject } from './core/index.ts'
export { createLogger } from './logging/index.ts'
export { Manager, type ManagerOptions, onShutdownSignals } from './manager/index.ts'
// The object helpers come from their own files, not the objects barrel: the barrel also holds the zod
// schemas (ConditionSchema, ObjectReferenceSchema) and validateAgainst, and a library build puts every
// module the root reaches through a barrel in the root's chunks, with the zod import they carry (about
// 14 MB of RSS at load; test/build/entry-imports.test.ts).
export { applyIfDrifted } from './objects/apply.ts'
export { setCondition, updateStatusIfChanged } from './objects/conditions.ts'
export { customResourceDefinition } from './objects/crd.ts'
export { finalize } from './objects/finalizer.ts'
export { withControllerReference } from './objects/owner.ts'
