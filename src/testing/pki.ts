/**
 * @module pki — the throw-away certificates of one test control plane, made with the `openssl` CLI
 * (Node's crypto cannot create X.509 certificates).
 *
 * Layout of the directory (all PEM; keys are EC P-256, which kube-apiserver, etcd
 * clients, Node and Go all accept, and which `openssl` generates in milliseconds):
 *
 * | file | what |
 * |---|---|
 * | `ca.crt` / `ca.key` | the cluster CA: signs serving certs and client certs (`--client-ca-file`) |
 * | `apiserver.crt` / `.key` | kube-apiserver serving cert (127.0.0.1, localhost, kubernetes.default…, 10.0.0.1) |
 * | `sa.key` / `sa.pub` | service-account token signing key pair (ES256) |
 * | `admin.crt` / `.key` | client cert CN=edgeop-admin, O=system:masters |
 * | `front-proxy-ca.crt` / `.key` | a separate CA trusted only by `--requestheader-client-ca-file` |
 * | `front-proxy-client.crt` / `.key` | the fault proxy's upstream identity (CN={@link FRONT_PROXY_CLIENT_NAME}) |
 * | `proxy-serving.crt` / `.key` | serving cert for fault proxies (127.0.0.1, localhost) |
 * | `users/<name>.crt` / `.key` | client certs made later by {@link TestPki.issueClientCert} |
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { EdgeopError } from '../core/errors.ts'
import { exec } from './exec.ts'

/**
 * Validity of every certificate in days. Long enough for a `cluster:up` session left
 * running over a holiday; the CA dies with the work directory anyway.
 */
export const CERT_VALIDITY_DAYS = 30

/** Common name of the fault proxy's front-proxy client cert; passed as `--requestheader-allowed-names`. */
export const FRONT_PROXY_CLIENT_NAME = 'edgeop-fault-proxy'

/** User name of the admin client cert. */
export const ADMIN_USER = 'edgeop-admin'

/** The group that bypasses RBAC (bootstrap binding `cluster-admin`). */
export const MASTERS_GROUP = 'system:masters'

/**
 * Names the kube-apiserver serving cert is valid for: loopback plus the in-cluster
 * names of the `kubernetes` Service and the first address of the service CIDR
 * (`10.0.0.0/16` → 10.0.0.1), as a real cluster's cert would be.
 */
export const APISERVER_SANS: readonly string[] = [
  'IP:127.0.0.1',
  'IP:10.0.0.1',
  'DNS:localhost',
  'DNS:kubernetes',
  'DNS:kubernetes.default',
  'DNS:kubernetes.default.svc',
  'DNS:kubernetes.default.svc.cluster.local',
]

/** Names a fault proxy's serving cert is valid for. */
export const PROXY_SANS: readonly string[] = ['IP:127.0.0.1', 'DNS:localhost']

/** Paths of a certificate and its private key. */
export interface KeyPairFiles {
  cert: string
  key: string
}

/** A client certificate with its PEM text, ready to put into a kubeconfig or a TLS option. */
export interface ClientCert extends KeyPairFiles {
  certPem: string
  keyPem: string
}

/**
 * A minimal openssl config: no default extensions (Debian's config would mark every
 * cert made by `req -x509` as a CA), only what `-addext` adds.
 */
const OPENSSL_CONFIG = '[req]\ndistinguished_name = dn\n[dn]\n'

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']

/**
 * Runs the `openssl` CLI. Node's crypto can make keys but not X.509 certificates (`X509Certificate`
 * only parses), so the throw-away CA and its certs come from `openssl`; when it is missing the error
 * says so instead of a bare ENOENT.
 */
async function openssl(args: readonly string[]): Promise<void> {
  try {
    await exec('openssl', args)
  } catch (err) {
    const code = (err as { cause?: { code?: unknown } }).cause?.code
    if (code !== 'ENOENT') throw err
    throw new EdgeopError(
      'EDGEOP_ERR_CONFIG',
      'the test control plane makes its throw-away certificates with the `openssl` command, which is not on PATH; install OpenSSL (e.g. `apt-get install openssl`, `apk add openssl`)',
      { step: 'create test certificates', cause: err },
    )
  }
}

/** Escapes a value for openssl's `-subj /K=V/…` syntax. */
function subjectValue(value: string): string {
  if (value.length === 0)
    throw new EdgeopError('EDGEOP_ERR_INVALID', 'certificate subject values must not be empty', {
      step: 'certificate subject',
    })
  return value.replace(/[\\/+=]/g, (c) => `\\${c}`)
}

/** Builds `/CN=cn/O=g1/O=g2` (Kubernetes reads CN as the user and each O as a group). */
export function subject(commonName: string, organizations: readonly string[] = []): string {
  return `/CN=${subjectValue(commonName)}${organizations.map((o) => `/O=${subjectValue(o)}`).join('')}`
}

/** The certificate authority and long-lived key pairs of one control plane. */
export class TestPki {
  readonly dir: string
  readonly ca: KeyPairFiles
  readonly apiserver: KeyPairFiles
  readonly serviceAccount: { key: string; pub: string }
  readonly admin: KeyPairFiles
  readonly frontProxyCa: KeyPairFiles
  readonly frontProxyClient: KeyPairFiles
  readonly proxyServing: KeyPairFiles
  readonly #config: string
  #serial = 0

  private constructor(dir: string) {
    this.dir = dir
    const pair = (name: string): KeyPairFiles => ({
      cert: join(dir, `${name}.crt`),
      key: join(dir, `${name}.key`),
    })
    this.ca = pair('ca')
    this.apiserver = pair('apiserver')
    this.serviceAccount = { key: join(dir, 'sa.key'), pub: join(dir, 'sa.pub') }
    this.admin = pair('admin')
    this.frontProxyCa = pair('front-proxy-ca')
    this.frontProxyClient = pair('front-proxy-client')
    this.proxyServing = pair('proxy-serving')
    this.#config = join(dir, 'openssl.cnf')
  }

  /** Creates every file of the table above in `dir` (created if missing). Takes about 0.1 s. */
  static async create(dir: string): Promise<TestPki> {
    const pki = new TestPki(dir)
    await mkdir(join(dir, 'users'), { recursive: true, mode: 0o700 })
    await writeFile(pki.#config, OPENSSL_CONFIG)
    await Promise.all([
      pki.#selfSigned(pki.ca, 'edgeop-test-ca'),
      pki.#selfSigned(pki.frontProxyCa, 'edgeop-test-front-proxy-ca'),
    ])
    await Promise.all([
      pki.#issue(pki.ca, pki.apiserver, subject('kube-apiserver'), 'serverAuth', APISERVER_SANS),
      pki.#issue(pki.ca, pki.proxyServing, subject('edgeop-fault-proxy-serving'), 'serverAuth', PROXY_SANS),
      pki.#issue(pki.ca, pki.admin, subject(ADMIN_USER, [MASTERS_GROUP]), 'clientAuth'),
      pki.#issue(pki.frontProxyCa, pki.frontProxyClient, subject(FRONT_PROXY_CLIENT_NAME), 'clientAuth'),
      pki.#serviceAccountKeys(),
    ])
    return pki
  }

  /** Reopens a directory written by {@link TestPki.create} (for restarts and the CLI). */
  static open(dir: string): TestPki {
    return new TestPki(dir)
  }

  /**
   * Issues a client cert for `user` in `groups`, signed by the cluster CA, so the
   * apiserver authenticates it as exactly that identity (CN = user, O = each group).
   * `name` picks the file name under `users/` (default: a sanitized user name plus a counter).
   */
  async issueClientCert(user: string, groups: readonly string[] = [], name?: string): Promise<ClientCert> {
    const base = name ?? `${user.replace(/[^A-Za-z0-9_.-]/g, '_')}-${++this.#serial}`
    const files = {
      cert: join(this.dir, 'users', `${base}.crt`),
      key: join(this.dir, 'users', `${base}.key`),
    }
    await this.#issue(this.ca, files, subject(user, groups), 'clientAuth')
    const [certPem, keyPem] = await Promise.all([readFile(files.cert, 'utf8'), readFile(files.key, 'utf8')])
    return { ...files, certPem, keyPem }
  }

  /** Reads a key pair's PEM text. */
  async read(files: KeyPairFiles): Promise<{ certPem: string; keyPem: string }> {
    const [certPem, keyPem] = await Promise.all([readFile(files.cert, 'utf8'), readFile(files.key, 'utf8')])
    return { certPem, keyPem }
  }

  async #selfSigned(out: KeyPairFiles, commonName: string): Promise<void> {
    // biome-ignore format: one openssl option and its value per pair reads better
    await openssl([
      'req', '-config', this.#config, '-x509', '-new', ...EC_KEY,
      '-keyout', out.key, '-out', out.cert, '-days', String(CERT_VALIDITY_DAYS), '-subj', subject(commonName),
      '-addext', 'basicConstraints=critical,CA:TRUE',
      '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    ])
  }

  async #issue(
    ca: KeyPairFiles,
    out: KeyPairFiles,
    subj: string,
    usage: 'serverAuth' | 'clientAuth',
    sans: readonly string[] = [],
  ): Promise<void> {
    // biome-ignore format: one openssl option and its value per pair reads better
    const args = [
      'req', '-config', this.#config, '-new', ...EC_KEY, '-keyout', out.key, '-out', out.cert,
      '-CA', ca.cert, '-CAkey', ca.key, '-days', String(CERT_VALIDITY_DAYS), '-subj', subj,
      '-addext', 'basicConstraints=critical,CA:FALSE',
      '-addext', 'keyUsage=critical,digitalSignature',
      '-addext', `extendedKeyUsage=${usage}`,
    ]
    if (sans.length > 0) args.push('-addext', `subjectAltName=${sans.join(',')}`)
    await openssl(args)
  }

  async #serviceAccountKeys(): Promise<void> {
    const { key, pub } = this.serviceAccount
    await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key])
    await openssl(['pkey', '-in', key, '-pubout', '-out', pub])
  }
}
