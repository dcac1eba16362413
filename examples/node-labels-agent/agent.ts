/**
 * @module node-labels-agent — a node-scoped agent: one process per node watches only its own Node
 * and keeps the Node's labels in a local file (`<dir>/labels.json`), for software on the host that
 * cannot talk to the API server.
 *
 * What it shows:
 * - a field selector (`metadata.name=<node>`) so that each agent's cache holds one Node, not the
 *   cluster's thousands: memory and watch traffic stay constant as the cluster grows;
 * - `metadataOnly`: labels live in metadata, so the Node's status (images, conditions) never
 *   crosses the wire;
 * - a predicate (`labelsChanged`) so that the Node's frequent heartbeats do not wake the reconcile;
 * - a side effect on the host, written atomically (temporary file + rename), and only when it
 *   differs, so the reconcile is idempotent;
 * - no leader election: every node runs its own agent, each the only writer of its own file.
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CORE_TYPES, type Controller, type KubeObject, type Manager, type SharedInformer } from 'edgeop'
import type { Node } from 'edgeop/api'
import { labelsChanged } from 'edgeop/controller'

/** The file the agent writes, under its directory. */
export const LABELS_FILE = 'labels.json'

/** What the agent needs to know. */
export interface NodeLabelsAgentOptions {
  /** The Node this agent runs on (in a DaemonSet: the downward API's `spec.nodeName`). */
  nodeName: string
  /** The directory the labels file goes to. */
  dir: string
}

/** What {@link addNodeLabelsAgent} registered. */
export interface NodeLabelsAgent {
  /** The controller, added to the manager. */
  controller: Controller
  /** The informer of the agent's own Node (its store holds that Node alone). */
  nodes: SharedInformer<Node>
}

/** Registers the agent's controller with `manager`; it starts with `manager.run`. */
export function addNodeLabelsAgent(manager: Manager, options: NodeLabelsAgentOptions): NodeLabelsAgent {
  const nodes = manager.factory.informer({
    type: CORE_TYPES.nodes,
    fieldSelector: `metadata.name=${options.nodeName}`,
    metadataOnly: true,
  })
  const file = join(options.dir, LABELS_FILE)
  const controller = manager.add({
    name: 'node-labels',
    for: { source: nodes, kind: 'Node', group: '', namespaced: false, predicates: [labelsChanged] },
    async reconcile({ name }) {
      const node = nodes.store.get(name)
      if (!node) {
        await rm(file, { force: true }) // the Node is gone: so is what we said about it
        return
      }
      const text = `${JSON.stringify(sortedLabels(node), null, 2)}\n`
      if ((await readFile(file, 'utf8').catch(() => undefined)) === text) return
      const temporary = `${file}.tmp`
      await writeFile(temporary, text, { mode: 0o644 })
      await rename(temporary, file) // readers see the old file or the new one, never half of one
    },
  })
  return { controller, nodes }
}

function sortedLabels(node: KubeObject): Record<string, string> {
  const labels = node.metadata.labels ?? {}
  return Object.fromEntries(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]!]),
  )
}
