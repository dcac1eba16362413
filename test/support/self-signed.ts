/**
 * @module self-signed — a throwaway self-signed serving certificate for 127.0.0.1 (openssl, one day).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** Writes key.pem and cert.pem (EC P-256, SAN IP:127.0.0.1) into `dir` and returns both as PEM text. */
export function selfSignedCert(dir: string): { cert: string; key: string } {
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1',
  ], { stdio: 'ignore' }) // biome-ignore format: one argument list
  return {
    cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    key: readFileSync(join(dir, 'key.pem'), 'utf8'),
  }
}
