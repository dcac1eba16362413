/**
 * The `check` command's preflight on the real apiserver: a user with no rights sees every missing
 * resource and verb with the RBAC rule that grants it; once the CRD exists and a Role grants those
 * rules, the same report turns green.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { KubeClient } from '../../src/client/kube-client.ts'
import type { ResourceType } from '../../src/client/resource.ts'
import { formatPreflight, leaderElectionPermissions, preflight } from '../../src/manager/preflight.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const rbac = (resource: string, namespaced: boolean, kind: string): ResourceType => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource,
  namespaced,
  kind,
})
const CRDS: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  namespaced: false,
  kind: 'CustomResourceDefinition',
}

const { env, setup, defer } = useTestEnv()
let admin: KubeClient
setup(() => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
})

test('a user without rights gets the missing rules; after the CRD and a Role exist the report is green', async () => {
  const ns = await env().createNamespace('preflight')
  const user = `preflight-${randomBytes(4).toString('hex')}`
  const group = `${user}.edgeop.test`
  const creds = await env().userKubeconfig(user)
  const client = new KubeClient(
    {
      server: env().server,
      tls: { ca: env().caPem, cert: creds.certPem, key: creds.keyPem, insecureSkipVerify: false },
      namespace: ns,
      source: `test user ${user}`,
    },
    { qps: -1 },
  )
  defer(() => client.close())
  const requirements = {
    resources: [
      { group: '', resource: 'configmaps' },
      { group, resource: 'widgets' },
    ],
    permissions: [
      { group: '', resource: 'configmaps', verbs: ['get', 'list', 'watch'], namespace: ns },
      { group, resource: 'widgets', verbs: ['list'], namespace: ns },
      { group, resource: 'widgets', subresource: 'status', verbs: ['patch'], namespace: ns },
      leaderElectionPermissions(ns),
    ],
  }

  const before = await preflight(client, requirements)
  assert.equal(before.ok, false)
  assert.equal(before.server.reachable, true)
  assert.match(before.server.version ?? '', /^v1\.\d+/)
  assert.equal(before.identity.username, user, 'SelfSubjectReview names the certificate identity')
  assert.deepEqual(
    before.resources.map((r) => r.found),
    [true, false],
  )
  assert.equal(before.permissions.length, 8)
  assert.ok(before.permissions.every((p) => !p.allowed))
  const text = formatPreflight(before)
  assert.match(text, new RegExp(`\\[-\\]resource widgets\\.${group.replace(/\./g, '\\.')} is missing`))
  assert.ok(
    text.endsWith(
      [
        'RBAC rules that would grant the missing permissions:',
        `Role in namespace "${ns}":`,
        '- apiGroups: [""]',
        '  resources: ["configmaps"]',
        '  verbs: ["get", "list", "watch"]',
        `- apiGroups: ["${group}"]`,
        '  resources: ["widgets"]',
        '  verbs: ["list"]',
        `- apiGroups: ["${group}"]`,
        '  resources: ["widgets/status"]',
        '  verbs: ["patch"]',
        '- apiGroups: ["coordination.k8s.io"]',
        '  resources: ["leases"]',
        '  verbs: ["get", "create", "update"]',
        '',
      ].join('\n'),
    ),
    text,
  )

  // Grant exactly what the report asked for, and install the CRD.
  const rules = requirements.permissions.map((p) => ({
    apiGroups: [p.group],
    resources: [p.subresource ? `${p.resource}/${p.subresource}` : p.resource],
    verbs: [...p.verbs],
  }))
  await admin.resource(rbac('roles', true, 'Role'), ns).create({ metadata: { name: 'operator' }, rules })
  await admin.resource(rbac('rolebindings', true, 'RoleBinding'), ns).create({
    metadata: { name: 'operator' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'operator' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  })
  const crds = admin.resource(CRDS)
  await crds.create({
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          subresources: { status: {} },
        },
      ],
    },
  })
  defer(() => crds.delete(`widgets.${group}`))

  // RBAC and discovery converge within moments on the apiserver; poll the report until green.
  const deadline = Date.now() + 30_000
  let after = await preflight(client, requirements)
  while (!after.ok && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250))
    after = await preflight(client, requirements)
  }
  assert.equal(after.ok, true, formatPreflight(after))
  assert.ok(!formatPreflight(after).includes('[-]'))
  assert.ok(!formatPreflight(after).includes('RBAC rules'))
})

test('`check` loads the kubeconfig named by --kubeconfig and exits 1 with the rules, then 0 once granted', async () => {
  const { checkCommand } = await import('../../src/cli/check-command.ts')
  const { runCli } = await import('../../src/cli/run-cli.ts')
  const ns = await env().createNamespace('check')
  const user = `check-${randomBytes(4).toString('hex')}`
  const creds = await env().userKubeconfig(user)
  const spec = {
    name: 'op',
    commands: {
      check: checkCommand({
        requirements: (o) => ({
          permissions: o.namespace.map((namespace) => ({
            group: '',
            resource: 'secrets',
            verbs: ['list'],
            namespace,
          })),
        }),
        stdout: { write: (s: string) => (out += s) },
      }),
    },
  }
  let out = ''
  const cli = async () => {
    out = ''
    let code = -1
    await runCli(spec, {
      argv: ['check', `--kubeconfig=${creds.kubeconfig}`, `--namespace=${ns}`],
      env: {},
      exit: (c) => {
        code = c
      },
    })
    return code
  }
  assert.equal(await cli(), 1)
  assert.match(out, new RegExp(`\\[\\+\\]authenticated as ${user} \\(groups: system:authenticated\\)\n`))
  assert.ok(
    out.endsWith(
      `Role in namespace "${ns}":\n- apiGroups: [""]\n  resources: ["secrets"]\n  verbs: ["list"]\n`,
    ),
    out,
  )

  await admin.resource(rbac('roles', true, 'Role'), ns).create({
    metadata: { name: 'check' },
    rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }],
  })
  await admin.resource(rbac('rolebindings', true, 'RoleBinding'), ns).create({
    metadata: { name: 'check' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'check' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  })
  const deadline = Date.now() + 30_000
  let code = await cli()
  while (code !== 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250))
    code = await cli()
  }
  assert.equal(code, 0, out)
  assert.match(out, new RegExp(`\\[\\+\\]may list secrets in namespace "${ns}"\\n$`))
})
