/**
 * Edge autonomy is on in every shipped install of the agent: the DaemonSet of deploy/agent/, its
 * copy in config/agent, the chart's (rendered with helm) and the systemd unit pass `--cache-dir`,
 * and the pods mount that directory writable from a hostPath (which outlives the pod), apart from
 * the root and outside every system directory.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { parseAllDocuments } from 'yaml'
import { systemDirectoryOf } from '../../../src/core/system-directories.ts'
import type { KubeObject } from '../../../src/core/types.ts'
import { cacheDirProblem } from '../../../src/operators/nodeconfig/root-check.ts'
import { helmTemplate } from '../../support/rendered-manifests.ts'

const ROOT = join(import.meta.dirname, '../../..')

interface Container {
  name: string
  args: string[]
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[]
}
interface DaemonSet extends KubeObject {
  spec: {
    template: {
      spec: {
        containers: Container[]
        volumes: { name: string; hostPath?: { path: string; type?: string }; emptyDir?: object }[]
      }
    }
  }
}

const parse = (text: string): KubeObject[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null)
const daemonSetOf = (objects: KubeObject[]): DaemonSet => {
  const found = objects.filter((o) => o.kind === 'DaemonSet')
  assert.equal(found.length, 1, 'one DaemonSet')
  return found[0] as DaemonSet
}
const fileDaemonSet = async (path: string) => daemonSetOf(parse(await readFile(join(ROOT, path), 'utf8')))
const flag = (args: readonly string[], name: string): string | undefined =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)

/** The cache directory `ds` gives its agent, after checking how it is mounted. */
async function checkCache(ds: DaemonSet, what: string): Promise<string> {
  const pod = ds.spec.template.spec
  const agent = pod.containers.find((c) => c.name === 'agent')!
  const cacheDir = flag(agent.args, 'cache-dir')
  const root = flag(agent.args, 'root')
  assert.ok(cacheDir, `${what}: the agent gets --cache-dir`)
  assert.ok(root, `${what}: the agent gets --root`)
  const mount = agent.volumeMounts?.find((m) => m.mountPath === cacheDir)
  assert.ok(mount, `${what}: a volume is mounted at ${cacheDir}`)
  assert.notEqual(mount.readOnly, true, `${what}: the cache is writable (the root filesystem is read-only)`)
  const volume = pod.volumes.find((v) => v.name === mount.name)
  assert.deepEqual(
    volume?.hostPath,
    { path: cacheDir, type: 'DirectoryOrCreate' },
    `${what}: the cache is a hostPath, which outlives the pod (an emptyDir is deleted with it)`,
  )
  assert.equal(systemDirectoryOf(cacheDir), undefined, `${what}: not a system directory`)
  assert.equal(
    await cacheDirProblem(root, cacheDir),
    undefined,
    `${what}: the agent accepts it beside --root`,
  )
  return cacheDir
}

test('deploy/agent/daemonset.yaml and its copy in config/agent keep cache snapshots on a hostPath beside the root', async () => {
  const shipped = await fileDaemonSet('deploy/agent/daemonset.yaml')
  assert.equal(await checkCache(shipped, 'deploy/agent'), '/var/lib/edgeop/cache')
  const copy = await fileDaemonSet('config/agent/daemonset.yaml')
  await checkCache(copy, 'config/agent')
  assert.deepEqual(copy.spec, shipped.spec, 'config/agent ships the same pod')
})

test("the chart's agent keeps cache snapshots by default, at agent.cacheDir; an empty agent.cacheDir turns them off", async () => {
  const chart = daemonSetOf(await helmTemplate('edgeop', 'edgeop-system', ['--set', 'agent.enabled=true']))
  assert.equal(await checkCache(chart, 'chart defaults'), '/var/lib/edgeop/cache')
  const moved = daemonSetOf(
    await helmTemplate('edgeop', 'edgeop-system', [
      '--set',
      'agent.enabled=true',
      '--set',
      'agent.cacheDir=/srv/edgeop-cache',
    ]),
  )
  assert.equal(await checkCache(moved, 'agent.cacheDir set'), '/srv/edgeop-cache')
  const off = daemonSetOf(
    await helmTemplate('edgeop', 'edgeop-system', [
      '--set',
      'agent.enabled=true',
      '--set',
      'agent.cacheDir=',
    ]),
  )
  const agent = off.spec.template.spec.containers[0]!
  assert.equal(flag(agent.args, 'cache-dir'), undefined, 'no --cache-dir')
  assert.deepEqual(
    off.spec.template.spec.volumes.map((v) => v.name),
    ['files'],
    'and no cache volume',
  )
})

test('the systemd unit keeps cache snapshots in its CacheDirectory, mode 0700', async () => {
  const unit = await readFile(join(ROOT, 'deploy/agent/edgeop-agent.service'), 'utf8')
  const exec = /^ExecStart=(.*)$/m.exec(unit)![1]!.split(' ')
  assert.equal(flag(exec, 'cache-dir'), '/var/cache/edgeop')
  assert.match(
    unit,
    /^CacheDirectory=edgeop$/m,
    'systemd creates /var/cache/edgeop, writable under ProtectSystem=strict',
  )
  assert.match(unit, /^CacheDirectoryMode=0700$/m)
  assert.equal(await cacheDirProblem(flag(exec, 'root')!, '/var/cache/edgeop'), undefined)
  assert.equal(systemDirectoryOf('/var/cache/edgeop'), undefined)
})
