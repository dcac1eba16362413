import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { request } from 'node:https'
import { join } from 'node:path'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { startWebhooks } from '../../src/operator/webhooks.ts'
import { issueCertificate } from '../../src/tls/self-signed-cert.ts'
import type { WebhookServer } from '../../src/webhook/webhook-server.ts'
import { recordingLogger } from '../support/recording-logger.ts'
import { scratchDirs } from '../support/scratch.ts'

const scratch = scratchDirs('edgeop-webhook-certs-')
const spec = {
  service: 'svc',
  secret: 'cert',
  register: (s: WebhookServer) => void s.validate('/v', () => ({ allowed: false, message: 'no' })),
}
/** No call may reach a client: with --webhook-cert-dir nothing is read from the cluster. */
const noClient = new Proxy({}, { get: () => assert.fail('the client was used') }) as KubeClient

test('--webhook-bind-address=0 starts nothing', async () => {
  const stop = await startWebhooks(
    spec,
    undefined,
    { bindAddress: '0', client: noClient, namespace: 'ns' },
    new MetricsRegistry(),
    recordingLogger(),
  )
  assert.equal(stop, undefined)
})

test('--webhook-cert-dir: serves the files, without the cluster; stop closes the server', async () => {
  const dir = await scratch()
  const ca = issueCertificate({ isCA: true, commonName: 'files-ca' })
  const pair = issueCertificate({ hosts: ['127.0.0.1'], issuer: ca })
  await writeFile(join(dir, 'tls.crt'), pair.cert)
  await writeFile(join(dir, 'tls.key'), pair.key)
  const log = recordingLogger()
  const stop = await startWebhooks(
    spec,
    undefined,
    { bindAddress: '127.0.0.1:0', certDir: dir, client: noClient, namespace: 'ns' },
    new MetricsRegistry(),
    log,
  )
  assert.ok(stop)
  const line = log.lines.find((l) => l.msg === 'serving webhooks')
  assert.deepEqual(line?.fields?.paths, ['/v'])
  const [, port] = String(line?.fields?.address).split(':')
  const status = await new Promise<number>((resolve, reject) => {
    const r = request(
      { host: '127.0.0.1', port: Number(port), method: 'POST', path: '/v', ca: ca.cert, agent: false },
      (res) => {
        res.resume()
        resolve(res.statusCode!)
      },
    )
    r.on('error', reject)
    r.end('{}')
  })
  assert.equal(status, 400)
  await stop()
})
