/**
 * @module kwok-stages — the lifecycle kwok simulates for fake nodes and pods.
 *
 * kwok 0.8 ships no default stages in the `kwok` binary (only `kwokctl` adds them), so
 * the harness passes its own with `--config`. They are deliberately minimal:
 *
 * | stage | when | then |
 * |---|---|---|
 * | `edgeop-node-ready` | a Node whose Ready condition is not True | Ready (no pressure), addresses, generous capacity |
 * | `edgeop-pod-ready` | a bound, Pending, not-deleting Pod | Running and Ready, with pod and host IPs |
 * | `edgeop-pod-complete` | a Running Pod owned by a Job | Succeeded, containers exited 0 |
 * | `edgeop-pod-delete` | a Pod with a deletionTimestamp | deleted (what the kubelet does after the grace period) |
 *
 * Node liveness afterwards comes from kwok's lease renewal (`--node-lease-duration-seconds`).
 * Each stage is emitted as JSON, which is valid YAML, one document per stage.
 */

/** Allocatable = capacity of every fake node: far more than any test schedules. */
const NODE_CAPACITY = { cpu: '32', memory: '256Gi', pods: '110' }

/** One kwok `Stage` object. */
function stage(name: string, kind: 'Node' | 'Pod', selector: unknown[], next: Record<string, unknown>) {
  return {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name },
    spec: { resourceRef: { apiGroup: 'v1', kind }, selector: { matchExpressions: selector }, next },
  }
}

const READY_NOT_TRUE = {
  key: '.status.conditions.[] | select( .type == "Ready" ) | .status',
  operator: 'NotIn',
  values: ['True'],
}
const NOT_DELETING = { key: '.metadata.deletionTimestamp', operator: 'DoesNotExist' }

const condition = (type: string, status: 'True' | 'False', reason: string): string =>
  [
    `- type: ${type}`,
    `  status: "${status}"`,
    `  reason: ${reason}`,
    '  lastHeartbeatTime: {{ $now | Quote }}',
    '  lastTransitionTime: {{ $now | Quote }}',
  ].join('\n')

const NODE_STATUS = [
  '{{ $now := Now }}',
  'conditions:',
  condition('Ready', 'True', 'KubeletReady'),
  condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
  condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
  condition('PIDPressure', 'False', 'KubeletHasSufficientPID'),
  'addresses:',
  '- type: InternalIP',
  '  address: {{ NodeIP | Quote }}',
  '- type: Hostname',
  '  address: {{ .metadata.name | Quote }}',
  `allocatable: ${JSON.stringify(NODE_CAPACITY)}`,
  `capacity: ${JSON.stringify(NODE_CAPACITY)}`,
  'nodeInfo:',
  '  architecture: amd64',
  '  operatingSystem: linux',
  '  kubeletVersion: edgeop-kwok',
  '  kubeProxyVersion: edgeop-kwok',
  '  containerRuntimeVersion: edgeop-kwok',
  '  kernelVersion: ""',
  '  osImage: ""',
  '  machineID: ""',
  '  systemUUID: ""',
  '  bootID: ""',
  'phase: Running',
].join('\n')

const POD_READY_STATUS = [
  '{{ $now := Now }}',
  '{{ $hostIP := NodeIPWith .spec.nodeName }}',
  '{{ $podIP := PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}',
  'conditions:',
  ...['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].flatMap((type) => [
    `- type: ${type}`,
    '  status: "True"',
    '  lastTransitionTime: {{ $now | Quote }}',
  ]),
  'containerStatuses:',
  '{{ range .spec.containers }}',
  '- name: {{ .name | Quote }}',
  '  image: {{ .image | Quote }}',
  '  imageID: ""',
  '  ready: true',
  '  started: true',
  '  restartCount: 0',
  '  state: { running: { startedAt: {{ $now | Quote }} } }',
  '{{ end }}',
  'initContainerStatuses:',
  '{{ range .spec.initContainers }}',
  '- name: {{ .name | Quote }}',
  '  image: {{ .image | Quote }}',
  '  imageID: ""',
  '  ready: true',
  '  restartCount: 0',
  '  state: { terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }} } }',
  '{{ end }}',
  'hostIP: {{ $hostIP | Quote }}',
  'hostIPs: [ { ip: {{ $hostIP | Quote }} } ]',
  'podIP: {{ $podIP | Quote }}',
  'podIPs: [ { ip: {{ $podIP | Quote }} } ]',
  'startTime: {{ $now | Quote }}',
  'phase: Running',
].join('\n')

const POD_COMPLETE_STATUS = [
  '{{ $now := Now }}',
  'conditions:',
  ...['Ready', 'ContainersReady'].flatMap((type) => [
    `- type: ${type}`,
    '  status: "False"',
    '  reason: PodCompleted',
    '  lastTransitionTime: {{ $now | Quote }}',
  ]),
  'containerStatuses:',
  '{{ range .spec.containers }}',
  '- name: {{ .name | Quote }}',
  '  image: {{ .image | Quote }}',
  '  imageID: ""',
  '  ready: false',
  '  started: false',
  '  restartCount: 0',
  '  state: { terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }} } }',
  '{{ end }}',
  'phase: Succeeded',
].join('\n')

/** The kwok `--config` file content: every stage of the table above. */
export function kwokStagesConfig(): string {
  const stages = [
    stage('edgeop-node-ready', 'Node', [READY_NOT_TRUE], { statusTemplate: NODE_STATUS }),
    stage(
      'edgeop-pod-ready',
      'Pod',
      [NOT_DELETING, { key: '.status.phase', operator: 'In', values: ['Pending'] }, READY_NOT_TRUE],
      { statusTemplate: POD_READY_STATUS },
    ),
    stage(
      'edgeop-pod-complete',
      'Pod',
      [
        NOT_DELETING,
        { key: '.status.phase', operator: 'In', values: ['Running'] },
        { key: '.metadata.ownerReferences.[].kind', operator: 'In', values: ['Job'] },
      ],
      { statusTemplate: POD_COMPLETE_STATUS },
    ),
    stage('edgeop-pod-delete', 'Pod', [{ key: '.metadata.deletionTimestamp', operator: 'Exists' }], {
      delete: true,
    }),
  ]
  return `${stages.map((s) => JSON.stringify(s, null, 2)).join('\n---\n')}\n`
}
