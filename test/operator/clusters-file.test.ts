/**
 * `--clusters-file`: the pure parser and reference split, and the follower re-reading the file on a
 * manual clock (a bad file keeps the members as they are).
 */
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import { noopLogger } from '../../src/core/log.ts'
import {
  CLUSTERS_FILE_POLL_MS,
  clusterRef,
  followClustersFile,
  parseClusterList,
  readClustersFile,
} from '../../src/operator/clusters-file.ts'
import { until } from '../support/http-stub.ts'
import { scratchDirs } from '../support/scratch.ts'

const scratch = scratchDirs('edgeop-clusters-file-')

test('parseClusterList: name=reference lines; comments and blank lines skipped', () => {
  assert.deepEqual(
    parseClusterList('# members\neast=east.kubeconfig\n\n  west=/etc/k/west:arn:aws:eks:eu:1:cluster/w  \n'),
    { east: 'east.kubeconfig', west: '/etc/k/west:arn:aws:eks:eu:1:cluster/w' },
  )
  assert.deepEqual(parseClusterList(''), {})
  for (const [bad, line] of [
    ['East=x', 1],
    ['east', 1],
    ['a=x\nb=\n', 2],
    ['a=x\na=y', 2],
    [`${'a'.repeat(64)}=x`, 1],
  ] as const)
    assert.throws(
      () => parseClusterList(bad),
      (err: Error & { code?: string }) =>
        err.code === 'EDGEOP_ERR_CONFIG' && err.message.startsWith(`clusters file line ${line}:`),
      bad,
    )
})

test('clusterRef: the path (relative to the file) before the first colon, the context after', () => {
  assert.deepEqual(clusterRef('east.kubeconfig', '/etc/edgeop'), {
    kubeconfig: '/etc/edgeop/east.kubeconfig',
  })
  assert.deepEqual(clusterRef('/k/w:arn:aws:eks:eu:1:cluster/w', '/etc/edgeop'), {
    kubeconfig: '/k/w',
    context: 'arn:aws:eks:eu:1:cluster/w',
  })
})

test('readClustersFile: a missing file is one EDGEOP_ERR_CONFIG naming it; a bad line names its number', async () => {
  const dir = await scratch()
  await assert.rejects(readClustersFile(join(dir, 'none')), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'EDGEOP_ERR_CONFIG')
    assert.equal(err.message, `clusters file ${join(dir, 'none')}: cannot read it (ENOENT)`)
    return true
  })
  await writeFile(join(dir, 'bad'), 'east=e\nWest=w\n')
  await assert.rejects(readClustersFile(join(dir, 'bad')), /clusters file line 2:/)
})

test('followClustersFile re-reads the file every poll period; a bad file changes nothing', async () => {
  const path = join(await scratch(), 'clusters')
  await writeFile(path, 'east=e.kubeconfig\n')
  const clock = new ManualClock()
  const updates: Record<string, string>[] = []
  const errors: string[] = []
  const ac = new AbortController()
  const done = followClustersFile(
    path,
    { update: async (w) => void updates.push(w) },
    { ...noopLogger, error: (m) => void errors.push(m) },
    ac.signal,
    clock,
  )
  await until(() => clock.pending > 0)
  assert.equal(updates.length, 0, "the first read is the caller's")
  await writeFile(path, 'east=e.kubeconfig\nwest=w.kubeconfig\n')
  await clock.advance(CLUSTERS_FILE_POLL_MS - 1)
  assert.equal(updates.length, 0, 'not before the poll period')
  await clock.advance(1)
  await until(() => updates.length === 1)
  assert.deepEqual(updates[0], { east: 'e.kubeconfig', west: 'w.kubeconfig' })
  await writeFile(path, 'not a cluster line\n')
  await until(() => clock.pending > 0)
  await clock.advance(CLUSTERS_FILE_POLL_MS)
  await until(() => errors.length === 1)
  assert.equal(updates.length, 1)
  ac.abort()
  await done
})

test('D4: a clusters file that never ends (/dev/zero) is refused after its 1 MiB cap, naming it', async () => {
  await assert.rejects(readClustersFile('/dev/zero'), {
    code: 'EDGEOP_ERR_CONFIG',
    message: 'clusters file /dev/zero is larger than the 1 MiB edgeop reads',
  })
})
