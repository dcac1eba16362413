/**
 * Kubeconfig shapes real tools write (our own fixtures in test/config/fixtures/valid): each
 * resolves to the expected server, TLS material, namespace and credentials.
 */
import assert from 'node:assert/strict'
import { readFile as readFs } from 'node:fs/promises'
import path from 'node:path'
import { test } from 'node:test'
import { ExecCredentialProvider } from '../../src/config/exec-credentials.ts'
import { loadKubeconfig } from '../../src/config/kubeconfig.ts'
import { type ResolvedContext, resolveContext } from '../../src/config/kubeconfig-context.ts'
import { mergeKubeconfigs, readKubeconfigFiles } from '../../src/config/kubeconfig-files.ts'
import { StaticCredentialProvider } from '../../src/config/static-credentials.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { credentialOutput, fixture, memoryFiles, recordingRunner } from './support/helpers.ts'

const CA_PEM =
  '-----BEGIN CERTIFICATE-----\nEDGEOP TEST CA - NOT A REAL CERTIFICATE\n-----END CERTIFICATE-----\n'
const CERT_PEM =
  '-----BEGIN CERTIFICATE-----\nEDGEOP TEST CLIENT CERT - NOT REAL\n-----END CERTIFICATE-----\n'
const readFileText = (file: string): Promise<string> => readFs(file, 'utf8')
const RSA_KEY_PEM =
  '-----BEGIN RSA PRIVATE KEY-----\nEDGEOP TEST RSA KEY - NOT REAL\n-----END RSA PRIVATE KEY-----\n'
const EC_KEY_PEM =
  '-----BEGIN EC PRIVATE KEY-----\nEDGEOP TEST CLIENT KEY - NOT REAL\n-----END EC PRIVATE KEY-----\n'

async function resolve(files: string[], context?: string): Promise<ResolvedContext> {
  return resolveContext(mergeKubeconfigs(await readKubeconfigFiles(files)), context)
}

function valid(name: string): string {
  return fixture('valid', name)
}

test('kubectl-written file: cert files and CA file resolve against the file directory; another context uses basic auth', async () => {
  const file = valid('kubectl-written.yaml')
  const dir = path.dirname(file)
  const r = await resolve([file])
  assert.equal(r.contextName, 'prod-telemetry')
  assert.equal(r.server, 'https://10.20.30.40:6443')
  assert.equal(r.namespace, 'telemetry')
  assert.equal(r.caFile, path.join(dir, 'certs/edge-ca.pem'))
  assert.equal(r.certFile, path.join(dir, 'certs/operator.crt'))
  assert.equal(r.keyFile, path.join(dir, 'certs/operator.key'))
  assert.deepEqual(r.auth, { kind: 'none' })
  const readFile = memoryFiles({
    [path.join(dir, 'certs/edge-ca.pem')]: CA_PEM,
    [path.join(dir, 'certs/operator.crt')]: CERT_PEM,
    [path.join(dir, 'certs/operator.key')]: RSA_KEY_PEM,
  })
  const config = await loadKubeconfig({
    paths: [file],
    readFile: memoryFiles({ [file]: await readFileText(file) }, readFile),
  })
  assert.deepEqual(config.tls, { ca: CA_PEM, cert: CERT_PEM, key: RSA_KEY_PEM, insecureSkipVerify: false })
  assert.equal(config.credentials, undefined)
  assert.equal(config.namespace, 'telemetry')
  assert.equal(config.source, `kubeconfig ${file} (context "prod-telemetry")`)
  assert.equal(config.contextName, 'prod-telemetry')

  const lab = await loadKubeconfig({ paths: [file], context: 'lab' })
  assert.equal(lab.server, 'https://10.20.30.41:6443')
  assert.equal(lab.tls.insecureSkipVerify, true)
  assert.equal(lab.namespace, 'default')
  assert.ok(lab.credentials instanceof StaticCredentialProvider)
  assert.deepEqual(await lab.credentials.get(), {
    basic: { username: 'tester', password: 'lab-password-not-secret' },
  })
  assert.equal(lab.credentials.describe, 'basic auth of user "tester"')
})

test('kind and k3s files: *-data fields become PEM strings', async () => {
  const kind = await loadKubeconfig({ paths: [valid('kind-style.yaml')] })
  assert.equal(kind.server, 'https://127.0.0.1:40123')
  assert.deepEqual(kind.tls, { ca: CA_PEM, cert: CERT_PEM, key: RSA_KEY_PEM, insecureSkipVerify: false })
  const k3s = await loadKubeconfig({ paths: [valid('k3s-style.yaml')] })
  assert.equal(k3s.server, 'https://edge-node-7:6443')
  assert.equal(k3s.tls.key, EC_KEY_PEM)
  assert.equal(k3s.contextName, 'default')
})

test('minikube extensions and eksctl repeated kind: extras ignored, equal duplicate key accepted', async () => {
  const mk = await resolve([valid('minikube-extensions.yaml')])
  assert.equal(mk.server, 'https://192.168.49.2:8443')
  assert.equal(mk.namespace, 'default')
  assert.equal(mk.caFile, '/home/edge/.minikube/ca.crt')
  assert.equal(mk.certFile, '/home/edge/.minikube/profiles/minikube/client.crt')
  const eksctl = await resolve([valid('eksctl-repeated-kind.yaml')])
  assert.equal(eksctl.server, 'https://192.168.39.20:8443')
  assert.equal(eksctl.keyFile, '/home/edge/.minikube/client.key')
})

test('EKS v1beta1 exec: command, args, null env, interactiveMode default; provider built lazily', async () => {
  const r = await resolve([valid('eks-exec-v1beta1.yaml')])
  assert.equal(r.server, 'https://ABCDEF0123456789.gr7.eu-west-1.eks.amazonaws.com')
  assert.equal(r.contextName, 'arn:aws:eks:eu-west-1:000011112222:cluster/edge-fleet')
  assert.deepEqual(r.auth, {
    kind: 'exec',
    exec: {
      command: 'aws',
      args: ['--region', 'eu-west-1', 'eks', 'get-token', '--cluster-name', 'edge-fleet', '--output', 'json'],
      env: [],
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      installHint: undefined,
      provideClusterInfo: false,
      interactiveMode: 'IfAvailable',
    },
  })
  const run = recordingRunner(() =>
    credentialOutput('client.authentication.k8s.io/v1beta1', { token: 'eks-token' }),
  )
  const config = await loadKubeconfig({
    paths: [valid('eks-exec-v1beta1.yaml')],
    execRunner: run,
    env: { PATH: '/bin' },
  })
  assert.ok(config.credentials instanceof ExecCredentialProvider)
  assert.equal(config.credentials.describe, 'exec plugin "aws"')
  assert.equal(run.requests.length, 0, 'the plugin runs on first use, not at load')
  assert.deepEqual(await config.credentials.get(), { token: 'eks-token' })
  const info = JSON.parse(run.requests[0]?.env.KUBERNETES_EXEC_INFO ?? '')
  assert.deepEqual(info, {
    apiVersion: 'client.authentication.k8s.io/v1beta1',
    kind: 'ExecCredential',
    spec: { interactive: false },
  })
})

test('GKE exec: multi-line plain installHint folds with one space; provideClusterInfo sends spec.cluster', async () => {
  const r = await resolve([valid('gke-exec.yaml')])
  assert.equal(r.auth.kind, 'exec')
  assert.equal(
    r.auth.kind === 'exec' && r.auth.exec.installHint,
    'Install gke-gcloud-auth-plugin for use with kubectl by following https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin',
  )
  const run = recordingRunner(() =>
    credentialOutput('client.authentication.k8s.io/v1beta1', { token: 'gke' }),
  )
  const config = await loadKubeconfig({
    paths: [valid('gke-exec.yaml')],
    execRunner: run,
    env: {},
    stdinIsTTY: true,
  })
  await config.credentials?.get()
  const request = run.requests[0]
  assert.equal(request?.interactive, true, 'IfAvailable with a terminal is interactive')
  assert.deepEqual(JSON.parse(request?.env.KUBERNETES_EXEC_INFO ?? ''), {
    apiVersion: 'client.authentication.k8s.io/v1beta1',
    kind: 'ExecCredential',
    spec: {
      interactive: true,
      cluster: {
        server: 'https://34.76.1.2',
        'certificate-authority-data': Buffer.from(CA_PEM).toString('base64'),
      },
    },
  })
})

test('AKS kubelogin and documented v1 exec: literal installHint, env list, cluster extension as spec.cluster.config', async () => {
  const aks = await resolve([valid('aks-kubelogin.yaml')])
  assert.equal(aks.server, 'https://edge-aks-dns-0a1b2c3d.hcp.westeurope.azmk8s.io:443')
  assert.equal(
    aks.auth.kind === 'exec' && aks.auth.exec.installHint,
    '\nkubelogin is not installed which is required to connect to AAD enabled cluster.\n\nTo learn more, please go to https://aka.ms/aks/kubelogin\n',
  )
  const v1 = await resolve([valid('exec-v1-documented.yaml')])
  assert.equal(v1.auth.kind, 'exec')
  if (v1.auth.kind !== 'exec') return
  assert.deepEqual(v1.auth.exec, {
    command: 'edge-credential-helper',
    args: ['token', '--audience=edge'],
    env: [
      { name: 'EDGE_SITE', value: 'site-42' },
      { name: 'EMPTY_VALUE', value: '' },
    ],
    apiVersion: 'client.authentication.k8s.io/v1',
    installHint:
      'edge-credential-helper is needed to reach this cluster.  Install it:\n\n  macOS:  brew install edge-credential-helper\n\nDebian: apt-get install edge-credential-helper\n',
    provideClusterInfo: true,
    interactiveMode: 'Never',
  })
  assert.deepEqual(v1.execExtension, { audience: 'edge', sites: ['site-42', 'site-43', 'site-44'] })
  const run = recordingRunner(() => credentialOutput('client.authentication.k8s.io/v1', { token: 't' }))
  const config = await loadKubeconfig({
    paths: [valid('exec-v1-documented.yaml')],
    execRunner: run,
    env: { HOME: '/home/edge' },
    stdinIsTTY: true,
    readFile: memoryFiles({ '/etc/edge/ca.pem': CA_PEM }, readFileText),
  })
  await config.credentials?.get()
  const request = run.requests[0]
  assert.equal(request?.interactive, false, 'interactiveMode Never')
  assert.equal(request?.env.HOME, '/home/edge')
  assert.equal(request?.env.EDGE_SITE, 'site-42')
  assert.equal(request?.env.EMPTY_VALUE, '')
  const info = JSON.parse(request?.env.KUBERNETES_EXEC_INFO ?? '')
  assert.deepEqual(info.spec.cluster, {
    server: 'https://172.30.0.10:6443',
    'certificate-authority-data': Buffer.from(CA_PEM).toString('base64'),
    config: { audience: 'edge', sites: ['site-42', 'site-43', 'site-44'] },
  })
})

test('quoting styles: single/double quotes, escapes, folded and literal tokens, --- and ..., trailing slash', async () => {
  const r = await resolve([valid('quoting-styles.yaml')])
  assert.equal(r.contextName, 'quoted-context')
  assert.equal(r.server, 'https://quoted.example.org:6443/prefix')
  assert.equal(r.tlsServerName, 'api.quoted.example.org')
  assert.equal(r.namespace, 'team-blue')
  assert.equal(r.userName, "it's-me")
  assert.deepEqual(r.auth, { kind: 'token', token: 'folded-token-part-one part-two' })
  const set = mergeKubeconfigs(await readKubeconfigFiles([valid('quoting-styles.yaml')]))
  assert.deepEqual(set.users.get('literal-user')?.value.token, 'literal-token')
  assert.equal(set.users.get('escaped')?.value.username, 'back\\slash "quoted"')
  assert.equal(set.users.get('escaped')?.value.password, 'tab\tinside')
})

test('IPv6 servers, UTF-8 names, flow mappings, null users, no trailing newline', async () => {
  const r = await resolve([valid('ipv6-utf8-flow.yaml')])
  assert.equal(r.contextName, 'ünïcode')
  assert.equal(r.clusterName, 'café-edge')
  assert.equal(r.server, 'https://[fd00:10::1]:6443')
  assert.equal(r.insecureSkipVerify, true)
  assert.equal(r.namespace, 'façade')
  assert.equal(r.userName, 'null-user')
  assert.deepEqual(r.auth, { kind: 'none' })
  const tokyo = await resolve([valid('ipv6-utf8-flow.yaml')], 'tokyo')
  assert.equal(tokyo.server, 'https://[::1]:16443')
  assert.equal(tokyo.clusterName, '東京')
  assert.equal(tokyo.userName, undefined)
  const config = await loadKubeconfig({ paths: [valid('ipv6-utf8-flow.yaml')], context: 'tokyo' })
  assert.equal(config.credentials, undefined, 'no user: anonymous')
})

test('proxy-url, tls-server-name, insecure with CA data, token, anchors and aliases', async () => {
  const proxy = await loadKubeconfig({ paths: [valid('proxy-tls.yaml')] })
  assert.equal(proxy.proxyUrl, 'socks5://localhost:1080')
  assert.deepEqual(proxy.tls, { ca: CA_PEM, serverName: 'kubernetes.default.svc', insecureSkipVerify: true })
  assert.equal(proxy.namespace, 'edge-system')
  assert.deepEqual(await proxy.credentials?.get(), { token: 'proxy-token-value' })
  assert.equal(proxy.credentials?.describe, 'bearer token of user "proxy-user"')
  assert.equal(proxy.credentials?.invalidate, undefined, 'a static token cannot be refreshed')
  const anchors = await resolve([valid('anchors.yaml')])
  assert.equal(anchors.server, 'https://anchored.example.org')
  assert.deepEqual(anchors.auth, { kind: 'token', token: 'shared-anchor-token' })
})

test('trailing spaces after plain scalars are not part of names; tokenFile is read at load', async () => {
  const file = valid('tokenfile-trailing-spaces.yaml')
  const readFile = memoryFiles({ '/var/run/secrets/edge/token': 'file-token\n' }, readFileText)
  const config = await loadKubeconfig({ paths: [file], readFile, clock: new ManualClock() })
  assert.equal(config.server, 'http://plain-http.example.org')
  assert.equal(config.contextName, 'plain')
  assert.deepEqual(await config.credentials?.get(), { token: 'file-token' })
  await assert.rejects(
    loadKubeconfig({ paths: [file] }),
    (err: Error) =>
      err.message ===
      `user "file-user" (kubeconfig ${file}, context "plain"): cannot read token file /var/run/secrets/edge/token: ENOENT`,
  )
})
