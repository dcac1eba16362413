/**
 * @module scrape — one GET of an ops endpoint over plain HTTP or HTTPS, on a fresh connection, with an
 * optional bearer token; for HTTPS it reports the certificate the server presented. Self-signed serving
 * certificates are accepted (tests check the certificate by its fingerprint instead).
 */
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { TLSSocket } from 'node:tls'

/** What one scrape saw. */
export interface Scrape {
  status: number
  contentType: string | undefined
  wwwAuthenticate: string | undefined
  body: string
  /** SHA-256 fingerprint of the server's certificate (HTTPS only). */
  fingerprint256?: string
  /** Its serial number, hex (HTTPS only). */
  serialNumber?: string
}

/** GETs `url` on a new connection (no keep-alive agent), sending `Authorization: Bearer <token>` when given. */
export function scrape(url: string, token?: string): Promise<Scrape> {
  const https = url.startsWith('https:')
  const request = https ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        agent: false,
        rejectUnauthorized: false,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
        timeout: 10_000,
      },
      (res) => {
        const cert = https ? (res.socket as TLSSocket).getPeerCertificate() : undefined
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => {
          body += d
        })
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers['content-type'],
            wwwAuthenticate: res.headers['www-authenticate'],
            body,
            ...(cert ? { fingerprint256: cert.fingerprint256, serialNumber: cert.serialNumber } : {}),
          }),
        )
      },
    )
    req.on('timeout', () => req.destroy(new Error(`scrape ${url}: timed out`)))
    req.on('error', reject)
    req.end()
  })
}
