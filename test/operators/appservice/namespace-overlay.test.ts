/**
 * F4: config/default under a kustomize overlay that sets another namespace (as a platform team
 * installs it) names no other namespace: the leader-election Lease, the webhooks' own-namespace
 * exclusion and their self-exclusion follow the namespace the overlay chose.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { after, test } from 'node:test'
import { kustomizeBuild } from '../../support/rendered-manifests.ts'

const ROOT = join(import.meta.dirname, '../../..')

test('F4: a namespace overlay over config/default leaves no edgeop-system anywhere', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-overlay-'))
  after(() => rm(dir, { recursive: true, force: true }))
  await writeFile(
    join(dir, 'kustomization.yaml'),
    `namespace: platform-ops\nresources:\n- ${relative(dir, join(ROOT, 'config/default'))}\n`,
  )
  const objects = await kustomizeBuild(dir)
  const text = JSON.stringify(objects)
  const left = [...text.matchAll(/.{0,80}edgeop-system.{0,40}/g)].map((m) => m[0])
  assert.deepEqual(left, [])
  // The operator's own namespace, renamed: the Lease and the webhooks' exclusions follow it.
  const ns = objects.find((o) => o.kind === 'Namespace')
  assert.equal(ns?.metadata.name, 'platform-ops')
})
