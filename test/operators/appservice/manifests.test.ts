import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'
import { manifestFiles } from '../../../build/manifests.ts'
import { appServiceCrd } from '../../../src/operators/appservice/api.ts'

const ROOT = join(import.meta.dirname, '../../..')

test('deploy/*.yaml equal the generated manifests (run npm run build:manifests after a change)', async () => {
  for (const [file, text] of Object.entries(manifestFiles())) {
    assert.equal(await readFile(join(ROOT, 'deploy', file), 'utf8'), text, `deploy/${file}`)
  }
})

test('the checked-in CRD is the one generated from the zod schema', async () => {
  const docs = (await readFile(join(ROOT, 'deploy/crd.yaml'), 'utf8')).split(/^---$/m).map((d) => parse(d))
  assert.deepEqual(docs, [appServiceCrd()])
})

test('the operator Deployment is hardened: non-root, read-only root filesystem, no capabilities, seccomp', async () => {
  const [dep] = (await readFile(join(ROOT, 'deploy/deployment.yaml'), 'utf8'))
    .split(/^---$/m)
    .map((d) => parse(d))
  const pod = dep.spec.template.spec
  assert.equal(pod.securityContext.runAsNonRoot, true)
  assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault')
  const c = pod.containers[0]
  assert.deepEqual(c.securityContext, {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
  })
  assert.equal(c.readinessProbe.httpGet.path, '/readyz')
  assert.equal(c.livenessProbe.httpGet.path, '/healthz')
  assert.ok(c.resources.limits.memory && c.resources.requests.cpu)
  assert.equal(dep.spec.replicas, 2)
  assert.ok(c.args.includes('--leader-elect'))
})

test("the binary accepts the Deployment's arguments (flag validation passes; only the missing cluster stops it)", async () => {
  const [dep] = (await readFile(join(ROOT, 'deploy/deployment.yaml'), 'utf8'))
    .split(/^---$/m)
    .map((d) => parse(d))
  const args: string[] = dep.spec.template.spec.containers[0].args
  const r = spawnSync(
    process.execPath,
    [join(ROOT, 'src/main.ts'), ...args, '--kubeconfig=/nonexistent/kubeconfig'],
    { encoding: 'utf8' },
  )
  assert.notEqual(r.status, 2, `usage error: ${r.stderr}`)
  assert.match(r.stderr, /nonexistent\/kubeconfig/)
})
