/**
 * @module webhook-request — fuzz target: raw HTTP/1.1 requests over TLS to the webhook server
 * (`WebhookServer.start` with the AppService operator's validate, mutate and convert routes on loopback).
 *
 * Answered: any reply or none, as long as nothing escapes a promise chain (the process would exit) and
 * a well-formed review is still answered 200 afterwards.
 */

import { MUTATE_PATH } from '../../../src/operators/appservice/deployment-names.ts'
import { appServiceWebhooks } from '../../../src/operators/appservice/webhooks.ts'
import { selfSignedCertificate } from '../../../src/tls/self-signed-cert.ts'
import { WebhookServer } from '../../../src/webhook/webhook-server.ts'
import type { FuzzSession, FuzzTarget } from '../harness.ts'
import { endpoint, serverSession } from '../raw-http.ts'
import { HTTP_DICTIONARY } from './ops-request.ts'

const REVIEW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u', object: { metadata: { name: 'a' }, spec: {} } },
})
const WELL_FORMED = `POST ${MUTATE_PATH} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: ${REVIEW.length}\r\n\r\n${REVIEW}`

export const webhookRequest: FuzzTarget = {
  name: 'webhook-request',
  entry: 'WebhookServer.start: the AppService webhooks over TLS on 127.0.0.1, raw bytes after the handshake',
  dictionary: [
    ...HTTP_DICTIONARY,
    '/validate-appservice',
    '/mutate-appservice',
    '/convert',
    '{"apiVersion":',
  ],
  maxBytes: 32 * 1024,
  async open(): Promise<FuzzSession> {
    const server = new WebhookServer()
    appServiceWebhooks().register(server, undefined)
    const at = endpoint(await server.start('127.0.0.1:0', selfSignedCertificate()), true)
    return serverSession([at], [{ at, request: WELL_FORMED, want: 200 }], () => server.close())
  },
}
