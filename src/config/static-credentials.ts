/**
 * @module static-credentials — CredentialProviders for credentials that never change: a token, basic auth, a client certificate.
 */
import type { CredentialProvider, Credentials } from './cluster-config.ts'

/** A provider that always returns the same credentials; it has no `invalidate` (a retry cannot help). */
export class StaticCredentialProvider implements CredentialProvider {
  /** The description given to the constructor, for messages. */
  readonly describe: string
  readonly #credentials: Credentials

  /** `describe` must not contain the secret (e.g. `static token of user "admin"`). */
  constructor(describe: string, credentials: Credentials) {
    this.describe = describe
    this.#credentials = Object.freeze({ ...credentials })
  }

  /** The fixed credentials (one frozen object). */
  get(): Promise<Credentials> {
    return Promise.resolve(this.#credentials)
  }
}

/** A fixed bearer token. `owner` names where it came from, for messages. */
export function staticTokenProvider(token: string, owner = 'a static token'): CredentialProvider {
  return new StaticCredentialProvider(`bearer token of ${owner}`, { token })
}

/** Fixed basic-auth credentials. */
export function basicAuthProvider(
  username: string,
  password: string,
  owner = 'static credentials',
): CredentialProvider {
  return new StaticCredentialProvider(`basic auth of ${owner}`, { basic: { username, password } })
}

/** A fixed client certificate and key (PEM). */
export function clientCertificateProvider(
  certificate: string,
  key: string,
  owner = 'static credentials',
): CredentialProvider {
  return new StaticCredentialProvider(`client certificate of ${owner}`, {
    clientCertificate: certificate,
    clientKey: key,
  })
}
