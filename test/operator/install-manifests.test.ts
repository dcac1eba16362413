/**
 * The manifests of a user's operator, generated from its spec: the RBAC granted is the RBAC `check`
 * verifies (its rules, and the Lease rights of `check --leader-elect` in the Lease's namespace), the CRDs
 * come first, and an operator without `--leader-elect` gets neither the flag nor a Lease Role.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as z from 'zod/mini'
import { booleanFlag, OPERATOR_FLAGS, parseCommandLine } from '../../src/cli/index.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { leaderElectionPermissions } from '../../src/manager/preflight.ts'
import { customResourceDefinition } from '../../src/objects/crd.ts'
import { installManifests } from '../../src/operator/install-manifests.ts'
import type { OperatorSpec } from '../../src/operator/operator-spec.ts'
import { rulePermissions } from '../../src/operator/rule-permissions.ts'
import { operatorManifestsCommand } from '../../src/operator/run-operator.ts'

const widgetCrd = customResourceDefinition({
  group: 'example.com',
  version: 'v1alpha1',
  kind: 'Widget',
  plural: 'widgets',
  singular: 'widget',
  scope: 'Namespaced',
  spec: z.object({ size: z.number() }),
})
const rules = [
  { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['example.com'], resources: ['widgets/status'], verbs: ['patch'] },
]
const spec: OperatorSpec = { name: 'widgets', crds: [widgetCrd], check: { rules }, controllers: () => [] }

const find = (objects: KubeObject[], kind: string, name: string): KubeObject => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name)
  assert.ok(o, `${kind}/${name} generated`)
  return o
}
const argsOf = (d: KubeObject): string[] =>
  (d.spec as { template: { spec: { containers: { args: string[] }[] } } }).template.spec.containers[0]!.args

test('the ClusterRole grants exactly the rules check verifies, bound to the ServiceAccount the Deployment runs as', () => {
  const objects = installManifests(spec, { image: 'registry.example.com/widgets:1' })
  const role = find(objects, 'ClusterRole', 'widgets')
  assert.deepEqual(role.rules, rules)
  assert.deepEqual(rulePermissions(role.rules as typeof rules, []), rulePermissions(rules, []))
  const binding = find(objects, 'ClusterRoleBinding', 'widgets')
  assert.deepEqual(binding.subjects, [
    { kind: 'ServiceAccount', name: 'widgets', namespace: 'widgets-system' },
  ])
  const deployment = find(objects, 'Deployment', 'widgets')
  const pod = (deployment.spec as { template: { spec: { serviceAccountName: string } } }).template.spec
  assert.equal(pod.serviceAccountName, 'widgets')
})

test('the Lease Role holds the verbs check --leader-elect verifies, in the namespace the Deployment elects in', () => {
  const objects = installManifests(spec, { image: 'w:1', namespace: 'platform-ops' })
  const role = find(objects, 'Role', 'widgets-leader-election')
  assert.equal(role.metadata.namespace, 'platform-ops')
  const wanted = leaderElectionPermissions('platform-ops')
  assert.deepEqual(role.rules, [
    { apiGroups: [wanted.group], resources: [wanted.resource], verbs: wanted.verbs },
  ])
  const args = argsOf(find(objects, 'Deployment', 'widgets'))
  assert.ok(args.includes('--leader-elect'))
  assert.ok(args.includes('--leader-election-namespace=platform-ops'))
  for (const o of objects.filter((x) => x.kind !== 'Namespace' && x.metadata.namespace !== undefined))
    assert.equal(o.metadata.namespace, 'platform-ops', `${o.kind}/${o.metadata.name}`)
})

test('the CRDs come first, then the Namespace, so that one kubectl apply installs everything in order', () => {
  const kinds = installManifests(spec, { image: 'w:1' }).map((o) => o.kind)
  assert.deepEqual(kinds.slice(0, 3), ['CustomResourceDefinition', 'Namespace', 'ServiceAccount'])
  assert.equal(kinds.at(-1), 'Deployment')
})

test('an operator whose flags have no --leader-elect gets no Lease Role and no leader-election args', () => {
  const { 'leader-elect': _, ...flags } = OPERATOR_FLAGS
  const objects = installManifests(
    { name: 'solo', flags: { ...flags, verbose: booleanFlag('More logs.') }, controllers: () => [] },
    { image: 's:1' },
  )
  assert.equal(
    objects.some((o) => o.kind === 'Role'),
    false,
  )
  assert.deepEqual(
    argsOf(find(objects, 'Deployment', 'solo')).filter((a) => a.includes('leader')),
    [],
  )
})

test('the manifests command defaults to the image <name>:latest in <name>-system and refuses a namespace that is not a DNS-1123 label', () => {
  const spec = { name: 'widgets', controllers: () => [] }
  const cli = { name: 'widgets', commands: { manifests: operatorManifestsCommand(spec) } }
  const ok = parseCommandLine(cli, ['manifests'], {})
  assert.equal(ok.kind, 'run')
  assert.deepEqual(ok.kind === 'run' && ok.values, {
    image: 'widgets:latest',
    installNamespace: 'widgets-system',
  })
  const bad = parseCommandLine(cli, ['manifests', '--install-namespace=Ops_NS'], {})
  assert.equal(bad.kind, 'error')
  assert.match(
    bad.kind === 'error' ? bad.message : '',
    /^--install-namespace: expected a namespace \(DNS-1123 label/,
  )
})
