/**
 * @module kustomize-on-node — config/default installed exactly as shipped, on the real node: run by
 * probe-node.sh (EDGEOP_NODE_THEN) once the node is Ready, like chart-on-node.ts. The overlay is
 * rendered with the project's kustomize (`kustomize build config/default`) and applied as
 * `kubectl apply --server-side` would (in the build's order, nothing patched); then what every
 * install shows (install-checks.ts): the operator's pods Running and Ready by kubelet's probes, one
 * leader, an AppService reconciled into pods that run, a webhook denial through the Service.
 */
import type { KubeClient } from '../../src/client/kube-client.ts'
import { applyObjects } from '../support/deploy-manifests.ts'
import { kustomizeBuild } from '../support/rendered-manifests.ts'
import { appServiceRuns, type OperatorInstall, operatorRunning, webhookDenial } from './install-checks.ts'
import { at, runOnNode, say } from './node-cluster.ts'

/** config/base's operator: its namespace, Deployment (and Lease) name and pod labels. */
const CONFIG_DEFAULT: OperatorInstall = {
  namespace: 'edgeop-system',
  deployment: 'edgeop-appservice',
  selector: 'app.kubernetes.io/name=edgeop-appservice',
  replicas: 2,
}

async function main(client: KubeClient): Promise<void> {
  const objects = await kustomizeBuild('default')
  await applyObjects(client, objects)
  say('applied', { at: at(), objects: objects.map((o) => `${o.kind}/${o.metadata.name}`) })
  await operatorRunning(client, CONFIG_DEFAULT)
  await appServiceRuns(client)
  await webhookDenial(client)
}

await runOnNode(main)
