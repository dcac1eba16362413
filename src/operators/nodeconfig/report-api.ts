/**
 * @module report-api — the NodeConfigReport API: one node's outcome for one NodeConfig, as its own small object.
 *
 * The first agents wrote every node's outcome into the NodeConfig's shared `status.nodes[]`:
 * the object grew by 524 bytes a node (etcd refuses it near 3,000 nodes) and each write woke
 * every agent (docs/nodeconfig-fleet.md). A report is written only by its node's agent
 * (a ValidatingAdmissionPolicy holds it to its node), is owned by its NodeConfig (deleted
 * with it), and is selectable by `spec.nodeName`, so an agent lists and watches its own
 * reports and nothing else.
 */
import { createHash } from 'node:crypto'
import * as z from 'zod/mini'
import type { ResourceType } from '../../client/index.ts'
import type { KubeObject, ObjectMeta } from '../../core/index.ts'
import { customResourceDefinition } from '../../objects/index.ts'
import { GROUP, KIND, type NodeConfig, type NodeConfigNodeStatus, STATE, VERSION } from './api.ts'

export const REPORT_KIND = 'NodeConfigReport'

/** How the API server addresses NodeConfigReports. */
export const NODECONFIGREPORTS: ResourceType<NodeConfigReport> = {
  group: GROUP,
  version: VERSION,
  resource: 'nodeconfigreports',
  namespaced: false,
  kind: REPORT_KIND,
}

/** The field an agent selects its reports by (a CRD `selectableField`, Kubernetes 1.32+). */
export const NODE_NAME_FIELD = 'spec.nodeName'
/** The field the aggregator maps a report to its NodeConfig by. */
export const NODECONFIG_FIELD = 'spec.nodeConfig'

/** `spec` of a report: whose, about what, and the outcome (the shared list's entry, keyed). */
export const NodeConfigReportSpec = z
  .object({
    nodeName: z.string().check(z.minLength(1), z.meta({ description: 'The reporting node.' })),
    nodeConfig: z.string().check(z.minLength(1), z.meta({ description: 'The NodeConfig reported on.' })),
    observedGeneration: z.optional(
      z.int().check(z.meta({ description: 'The NodeConfig generation reported on.' })),
    ),
    state: z.enum([STATE.applied, STATE.failed]).check(z.meta({ description: 'Applied or Failed.' })),
    message: z.optional(z.string().check(z.meta({ description: 'What is in place, or why not.' }))),
    lastTransitionTime: z.optional(
      z.string().check(z.meta({ description: 'When state last changed (RFC 3339).' })),
    ),
  })
  .check(z.meta({ description: "One node's outcome for one NodeConfig, written by that node's agent." }))
export type NodeConfigReportSpec = z.infer<typeof NodeConfigReportSpec>

/** A NodeConfigReport object. */
export interface NodeConfigReport extends KubeObject {
  metadata: ObjectMeta
  spec: NodeConfigReportSpec
}

/** Longest object name the API server accepts (a DNS-1123 subdomain). */
const MAX_NAME_LENGTH = 253

/**
 * The report's name: `<nodeconfig>.<node>`, or — when that passes 253 characters — a
 * prefix of it, a dot and 16 hex characters of its sha256, so every pair keeps one name.
 */
export function reportName(nodeConfig: string, node: string): string {
  const name = `${nodeConfig}.${node}`
  if (name.length <= MAX_NAME_LENGTH) return name
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 16)
  return `${name.slice(0, MAX_NAME_LENGTH - hash.length - 1).replace(/[.-]+$/, '')}.${hash}`
}

/**
 * The report `node` applies for `config` (server-side apply body): owned by the NodeConfig,
 * so the garbage collector deletes it with the NodeConfig.
 */
export function reportBody(config: NodeConfig, entry: NodeConfigNodeStatus): NodeConfigReport {
  const { name: nodeName, ...outcome } = entry
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: REPORT_KIND,
    metadata: {
      name: reportName(config.metadata.name!, nodeName),
      ownerReferences: [
        {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: KIND,
          name: config.metadata.name!,
          uid: config.metadata.uid!,
        },
      ],
    },
    spec: { nodeName, nodeConfig: config.metadata.name!, ...outcome },
  }
}

/** The shared list's entry a report stands for. */
export function reportEntry(report: NodeConfigReport): NodeConfigNodeStatus {
  const { nodeConfig: _, nodeName, ...outcome } = report.spec
  return { name: nodeName, ...outcome }
}

/** The UID of the NodeConfig a report belongs to (its owner reference), if any. */
export function reportOwnerUid(report: NodeConfigReport): string | undefined {
  return report.metadata.ownerReferences?.find((o) => o.kind === KIND)?.uid
}

/** The CRD, generated from the schema above, with `spec.nodeName` and `spec.nodeConfig` selectable. */
export function nodeConfigReportCrd() {
  const crd = customResourceDefinition({
    group: GROUP,
    version: VERSION,
    kind: REPORT_KIND,
    plural: 'nodeconfigreports',
    singular: 'nodeconfigreport',
    shortNames: ['nodecfgreport'],
    scope: 'Cluster',
    spec: NodeConfigReportSpec,
    printerColumns: [
      { name: 'Node', type: 'string', jsonPath: '.spec.nodeName' },
      { name: 'NodeConfig', type: 'string', jsonPath: '.spec.nodeConfig' },
      { name: 'Generation', type: 'integer', jsonPath: '.spec.observedGeneration' },
      { name: 'State', type: 'string', jsonPath: '.spec.state' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  })
  const selectableFields = [{ jsonPath: `.${NODE_NAME_FIELD}` }, { jsonPath: `.${NODECONFIG_FIELD}` }]
  return {
    ...crd,
    spec: { ...crd.spec, versions: crd.spec.versions.map((v) => ({ ...v, selectableFields })) },
  }
}
