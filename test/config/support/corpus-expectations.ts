/**
 * @module corpus-expectations — what INDEX.md of the reference kubeconfig corpus says client-go resolves, per file.
 *
 * Transcribed by hand from test/config/fixtures/corpus/INDEX.md. Where edgeop
 * deliberately differs from client-go, a comment says how.
 */

const FAKE_CA = '-----BEGIN CERTIFICATE-----\nFAKE CERT FOR TESTING ONLY'

export type Auth =
  | { kind: 'none' }
  | { kind: 'token'; token: string }
  | { kind: 'token-file'; path: string }
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'cert-files'; cert: string; key: string }
  | { kind: 'cert-data' }
  | {
      kind: 'exec'
      command: string
      args: string[]
      apiVersion: string
      interactiveMode?: string
      env?: [string, string][]
    }

export interface Expected {
  context?: string
  server: string
  auth: Auth
  namespace?: string
  insecure?: boolean
  caFile?: string
  /** Prefix of the decoded CA data. */
  caData?: string
  tlsServerName?: string
  proxyUrl?: string
  /** Error building the client (the file itself loads). */
  buildError?: string
}

/** `F` is the absolute path of the corpus file, `D` its directory. */
export const RESOLVES: Record<string, (F: string, D: string) => Expected> = {
  'kubectl-docs-config-demo-minify.yaml': (_, D) => ({
    server: 'https://1.2.3.4',
    auth: { kind: 'cert-files', cert: `${D}/fake-cert-file`, key: `${D}/fake-key-file` },
    caFile: `${D}/fake-ca-file`,
    namespace: 'frontend',
  }),
  'k8s-docs-exec-plugin-v1.yaml': () => ({
    server: 'https://172.17.4.100:6443',
    caFile: '/etc/kubernetes/ca.pem',
    auth: {
      kind: 'exec',
      command: 'example-client-go-exec-plugin',
      args: ['arg1', 'arg2'],
      apiVersion: 'client.authentication.k8s.io/v1',
      interactiveMode: 'Never',
      env: [['FOO', 'bar']],
    },
  }),
  'k8s-docs-webhook-kubeconfig.yaml': () => ({
    server: 'https://authn.example.com/authenticate',
    caFile: '/path/to/ca.pem',
    auth: { kind: 'cert-files', cert: '/path/to/cert.pem', key: '/path/to/key.pem' },
  }),
  'k8s-docs-kubelet-bootstrap-token.yaml': () => ({
    server: 'https://my.server.example.com:6443',
    caFile: '/var/lib/kubernetes/ca.pem',
    auth: { kind: 'token', token: 'abcdef.0123456789abcdef' },
  }),
  'k3s-rpi-k3s.yaml': () => ({ server: 'https://rpi:6443', auth: { kind: 'cert-data' }, caData: FAKE_CA }),
  'k3d-k3s-basic-auth.yaml': () => ({
    server: 'https://localhost:6443',
    auth: { kind: 'basic', username: 'admin', password: 'deadbeef'.repeat(4) },
    caData: FAKE_CA,
  }),
  'minikube-extensions.yaml': () => ({
    server: 'https://127.0.0.1:55000',
    caFile: '/Users/medya/.minikube/ca.crt',
    auth: {
      kind: 'cert-files',
      cert: '/Users/medya/.minikube/profiles/minikube/client.crt',
      key: '/Users/medya/.minikube/profiles/minikube/client.key',
    },
    namespace: 'default',
  }),
  'microk8s-token-insecure.yaml': () => ({
    server: 'https://10.0.0.78:16443',
    auth: { kind: 'token', token: 'REDACTED' },
    insecure: true,
  }),
  'eks-awscli-v1beta1.yaml': () => ({
    server: 'https://endpoint.amazonaws.com',
    caData: FAKE_CA,
    auth: {
      kind: 'exec',
      command: 'aws',
      args: [
        '--region',
        'region',
        'eks',
        'get-token',
        '--cluster-name',
        'ExampleCluster',
        '--output',
        'json',
      ],
      apiVersion: 'client.authentication.k8s.io/v1beta1',
    },
  }),
  'eks-awscli-proxy-url.yaml': () => ({
    server: 'https://endpoint.amazonaws.com',
    proxyUrl: 'https://myproxy.com',
    caData: FAKE_CA,
    auth: {
      kind: 'exec',
      command: 'aws',
      args: ['--region', 'region', 'eks', 'get-token', '--cluster-name', 'ExampleCluster'],
      apiVersion: 'client.authentication.k8s.io/v1beta1',
    },
  }),
  'eksctl-iam-authenticator-two-clusters.yaml': (F) => ({
    server: 'https://42.sk1.us-west-2.eks.amazonaws.com',
    caData: FAKE_CA,
    auth: {
      kind: 'exec',
      command: 'aws-iam-authenticator',
      args: ['token', '-i', 'cluster-one'],
      apiVersion: 'client.authentication.k8s.io/v1alpha1',
      interactiveMode: 'IfAvailable',
    },
    buildError:
      'user "admin@cluster-one.us-west-2.eksctl.io": exec plugin "aws-iam-authenticator" uses apiVersion ' +
      '"client.authentication.k8s.io/v1alpha1", which is not supported (use client.authentication.k8s.io/v1 or ' +
      `client.authentication.k8s.io/v1beta1) (kubeconfig ${F}, context "admin@cluster-one.us-west-2.eksctl.io")`,
  }),
  'eksctl-minikube-sample-dup-kind-key.yaml': () => ({
    server: 'https://192.168.64.19:8443',
    caFile: '/Users/bob/.minikube/ca.crt',
    auth: {
      kind: 'cert-files',
      cert: '/Users/bob/.minikube/client.crt',
      key: '/Users/bob/.minikube/client.key',
    },
  }),
  'aks-kubelogin-spn.yaml': () => ({
    server: 'https://test-cluster-12345.hcp.eastus.azmk8s.io:443',
    caData: FAKE_CA,
    auth: {
      kind: 'exec',
      command: 'kubelogin',
      args: [
        'get-token',
        '--server-id',
        'test-server',
        '--client-id',
        '80faf920-1908-4b52-b5ef-a8e7bedfc67a',
        '--tenant-id',
        'test-tenant',
        '--environment',
        'AzurePublicCloud',
        '--client-secret',
        'test-secret',
        '--login',
        'spn',
      ],
      apiVersion: 'client.authentication.k8s.io/v1beta1',
    },
  }),
  'gardener-generic-tokenfile.yaml': () => ({
    server: 'https://garden.local.gardener.cloud:6443',
    caData: FAKE_CA,
    auth: { kind: 'token-file', path: '/var/run/secrets/gardener.cloud/garden/generic-kubeconfig/token' },
  }),
  'gardener-token-folded-scalar.yaml': () => ({
    server: 'https://api.live.gardener.cloud.sap',
    auth: { kind: 'token', token: '$GARDENER_TOKEN' },
    namespace: 'garden-goats',
  }),
  'csharp-client-docstart-multi.yaml': (_, D) => ({
    server: 'https://horse.org:4443',
    caFile: `${D}/assets/ca.crt`,
    auth: { kind: 'cert-files', cert: `${D}/assets/client.crt`, key: `${D}/assets/client.key` },
    namespace: 'chisel-ns',
  }),
  'csharp-client-ipv6-wildcard.yaml': () => ({
    server: 'https://[::]:443',
    auth: { kind: 'basic', username: 'admin', password: 'secret' },
    namespace: 'chisel-ns',
  }),
  'fabric8-tls-server-name.yaml': () => ({
    server: 'https://kubernetes.example.com:6443',
    tlsServerName: 'custom-server.example.com',
    caData: FAKE_CA,
    auth: { kind: 'cert-data' },
  }),
  'fabric8-exec-windows-escaped-command.yaml': (F) => ({
    server: 'https://wherever',
    auth: {
      kind: 'exec',
      command: '.\\token-generator-win.bat',
      args: ['world'],
      apiVersion: 'client.authentication.k8s.io/v1',
      env: [['PART1', 'hello']],
    },
    buildError:
      'user "test": interactiveMode must be specified to use exec plugin ".\\token-generator-win.bat" with apiVersion ' +
      `client.authentication.k8s.io/v1 (kubeconfig ${F}, context "test")`,
  }),
  'js-client-socks5-proxy-namespace.yaml': () => ({
    server: 'http://example2.com',
    insecure: true,
    caData: 'CADATA2',
    auth: { kind: 'cert-data' },
    namespace: 'namespace2',
  }),
  'js-client-empty-user-trailing-space.yaml': () => ({
    server: 'http://example2.com',
    insecure: true,
    caData: 'CADATA2',
    auth: { kind: 'none' },
  }),
  'java-client-utf8-name.yaml': () => ({ server: 'http://kubeconfig.dir.com', auth: { kind: 'none' } }),
  // kubectl-docs-config-demo-view.yaml has current-context "" (see LOAD_ERRORS); these are its named contexts.
  'kubectl-docs-config-demo-view.yaml#dev-frontend': (_, D) => ({
    context: 'dev-frontend',
    server: 'https://1.2.3.4',
    auth: { kind: 'cert-files', cert: `${D}/fake-cert-file`, key: `${D}/fake-key-file` },
    caFile: `${D}/fake-ca-file`,
    namespace: 'frontend',
  }),
  'kubectl-docs-config-demo-view.yaml#exp-test': () => ({
    context: 'exp-test',
    server: 'https://5.6.7.8',
    auth: { kind: 'basic', username: 'exp', password: 'some-password' },
    namespace: 'default',
    insecure: true,
  }),
  'malformed-anchor-alias.yaml': (_, D) => ({
    server: 'https://horse.org:4443',
    caFile: `${D}/assets/ca.crt`,
    auth: { kind: 'token', token: 'blue-token' },
    namespace: 'chisel-ns',
  }),
  // client-go ≥1.32 reports the missing interactiveMode first; edgeop names the unsupported apiVersion.
  'malformed-unknown-exec-apiversion.yaml': (F) => ({
    server: 'https://endpoint.amazonaws.com',
    caData: FAKE_CA,
    auth: {
      kind: 'exec',
      command: 'aws',
      args: [
        '--region',
        'region',
        'eks',
        'get-token',
        '--cluster-name',
        'ExampleCluster',
        '--output',
        'json',
      ],
      apiVersion: 'client.authentication.k8s.io/v1alpha2',
    },
    buildError:
      'user "arn:aws:eks:region:111222333444:cluster/ExampleCluster": exec plugin "aws" uses apiVersion ' +
      '"client.authentication.k8s.io/v1alpha2", which is not supported (use client.authentication.k8s.io/v1 or ' +
      `client.authentication.k8s.io/v1beta1) (kubeconfig ${F}, context "arn:aws:eks:region:111222333444:cluster/ExampleCluster")`,
  }),
}

/** Files that client-go (and edgeop) cannot use: the exact edgeop error. */
export const LOAD_ERRORS: Record<string, (F: string) => string> = {
  // client-go: "current-context is not set" and a silent fallback to localhost:8080; edgeop refuses.
  'kubectl-docs-config-demo-view.yaml': (F) =>
    `current-context is not set in ${F}; choose a context with the "context" option or "kubectl config use-context <name>" (contexts: "dev-frontend", "dev-storage", "exp-test")`,
  'gke-gcloud-auth-plugin-users-only.yaml': (F) =>
    `current-context is not set in ${F}; choose a context with the "context" option or "kubectl config use-context <name>" (contexts: none)`,
  // client-go refuses the whole file: "illegal base64 data at input byte 12".
  'kind-merged-two-clusters.yaml': (F) =>
    `${F}: certificate-authority-data of cluster "kind-foo" is not valid base64`,
  'malformed-current-context-missing.yaml': (F) =>
    `context "admin@cluster-old.eu-north-1.eksctl.io" not found in ${F} (contexts: "admin@cluster-two.us-west-2.eksctl.io")`,
  'malformed-context-user-missing.yaml': (F) =>
    `user "arn:aws:eks:us-west-2:111222333444:cluster/Existing" (context "arn:aws:eks:us-west-2:111222333444:cluster/Existing" in ${F}) not found in ${F}`,
  'malformed-bad-indentation.yaml': (F) =>
    `${F}:13:4: bad indentation: expected a sequence entry at column 3, found column 4`,
  'malformed-users-is-scalar.yaml': (F) => `${F}: users: expected a list, got a string`,
  'malformed-truncated-snipped-ipv6.yaml': (F) =>
    `${F}:12:1: expected a mapping key ("key: value") but found no ":" on this line`,
  // client-go keeps the last value; edgeop refuses a conflicting duplicate.
  'malformed-duplicate-keys.yaml': (F) =>
    `${F}:17:5: key "server" appears twice with different values (lines 16 and 17)`,
  'malformed-tab-indent.yaml': (F) =>
    `${F}:22:1: tab character used for indentation (YAML allows only spaces)`,
}
