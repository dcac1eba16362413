import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readdir, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { systemDirectoryOf } from '../../../src/core/system-directories.ts'
import { checkAgentRoot } from '../../../src/operators/nodeconfig/root-check.ts'

const dirs: string[] = []
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})
async function tempDir(): Promise<string> {
  const d = await realpath(await mkdtemp(join(tmpdir(), 'edgeop-root-')))
  dirs.push(d)
  return d
}

test('system directories: the OS trees and everything in them; shared directories only themselves', () => {
  const cases: [string, string | undefined][] = [
    ['/', '/'],
    ['/etc', '/etc'],
    ['/etc/ssh', '/etc'],
    ['/usr/local/bin', '/usr'],
    ['/lib64', '/lib64'],
    ['/proc/1', '/proc'],
    ['/root/.ssh', '/root'],
    ['/var', '/var'],
    ['/var/lib', '/var/lib'],
    ['/home', '/home'],
    ['/run', '/run'],
    ['/var/spool', '/var/spool'],
    ['/home/edge/.ssh', '/home/edge/.ssh'],
    ['/home/edge/.ssh/keys', '/home/edge/.ssh'],
    ['/home/edge/.sshd', undefined],
    ['/opt/cni', undefined],
    ['/opt/cni/binaries', undefined],
    ['/var/lib/kubeletx', undefined],
    ['/var/lib/edgeop/files', undefined],
    ['/home/edge/files', undefined],
    ['/etcetera', undefined],
    ['/usrdata', undefined],
    ['/host/etc', undefined],
  ]
  for (const [dir, expected] of cases) assert.equal(systemDirectoryOf(dir), expected, dir)
})

test('a missing root is created (mode 0755) and accepted; the probe file leaves nothing behind', async () => {
  const root = join(await tempDir(), 'a', 'b')
  assert.equal(await checkAgentRoot(root), undefined)
  const st = await stat(root)
  assert.ok(st.isDirectory())
  assert.equal(st.mode & 0o777, 0o755 & ~process.umask())
  assert.deepEqual(await readdir(root), [])
})

test('an existing empty directory is accepted', async () => {
  assert.equal(await checkAgentRoot(await tempDir()), undefined)
})

test('refusals say what is wrong', async () => {
  const dir = await tempDir()
  const file = join(dir, 'file')
  await writeFile(file, 'x')
  await symlink('/', join(dir, 'to-slash'))
  await symlink('/etc', join(dir, 'to-etc'))
  const cases: [string, { allowSystemRoot?: boolean }, RegExp, 'system' | 'unusable'][] = [
    ['', {}, /^must not be empty$/, 'unusable'],
    ['/', {}, /^"\/" is a system directory: a NodeConfig could then replace/, 'system'],
    ['/etc/edgeop', {}, /^"\/etc\/edgeop" is inside \/etc, a system directory/, 'system'],
    ['/var/lib/../..', {}, /^"\/var\/lib\/\.\.\/\.\." \(it resolves to \/\) is a system directory/, 'system'],
    [join(dir, 'to-slash'), {}, /\(it resolves to \/\) is a system directory/, 'system'],
    [join(dir, 'to-etc', 'x'), {}, /\(it resolves to \/etc\/x\) is inside \/etc/, 'system'],
    [file, {}, /^".*\/file" exists and is not a directory$/, 'unusable'],
    [join(file, 'sub'), {}, /^".*\/file\/sub": .*\/file is not a directory$/, 'unusable'],
    // Not writable even for root: /proc/self/fdinfo lists descriptors and refuses new files.
    ['/proc/self/fdinfo', { allowSystemRoot: true }, /^"\/proc\/self\/fdinfo" is not writable: /, 'unusable'],
    ['/proc/self/nope', { allowSystemRoot: true }, /does not exist and cannot be created: /, 'unusable'],
  ]
  for (const [root, options, message, kind] of cases) {
    const problem = await checkAgentRoot(root, options)
    assert.ok(problem, root)
    assert.equal(problem.kind, kind, root)
    assert.match(problem.message, message)
  }
  assert.deepEqual(await readdir(dir), ['file', 'to-etc', 'to-slash'], 'nothing was created beside them')
})

test('a system directory is accepted when explicitly allowed and usable', async () => {
  const dir = await tempDir()
  await symlink(dir, join(dir, 'self'))
  // /tmp itself is a system directory; a symlink into a temporary directory is not.
  assert.equal((await checkAgentRoot('/tmp'))?.kind, 'system')
  assert.equal(await checkAgentRoot(join(dir, 'self')), undefined)
})

test('a long root is cut in the message', async () => {
  const problem = await checkAgentRoot(`/etc/${'x'.repeat(5_000)}`)
  assert.ok(problem && problem.message.length < 400, problem?.message.slice(0, 400))
})

test('an unreadable parent stops creation with the reason', async (t) => {
  if (process.getuid?.() === 0) {
    t.diagnostic('running as root: permissions do not stop root; /proc above covers the unwritable case')
    return
  }
  const dir = await tempDir()
  const locked = join(dir, 'locked')
  await mkdir(locked, { mode: 0o500 })
  const problem = await checkAgentRoot(join(locked, 'root'))
  assert.match(problem?.message ?? '', /cannot be created: EACCES/)
  const here = await checkAgentRoot(locked)
  assert.match(here?.message ?? '', /is not writable: EACCES/)
})

// D15: directories whose files something executes or trusts as they appear, one test each. A
// root there is refused before anything is created (checked as written, then resolved). The
// denylist is asserted first: were it to miss a path, checkAgentRoot would create it on this machine.
const EXECUTED: [string, string, string][] = [
  [
    '/var/lib/rancher/k3s/server/manifests',
    '/var/lib/rancher/k3s/server/manifests',
    'k3s applies every manifest',
  ],
  ['/var/lib/rancher/k3s/agent/pod-manifests', '/var/lib/rancher/k3s/agent/pod-manifests', 'k3s static pods'],
  ['/var/lib/rancher/rke2/server/manifests/x', '/var/lib/rancher/rke2/server/manifests', 'RKE2 manifests'],
  ['/opt/cni/bin', '/opt/cni/bin', 'CNI plugins are executed'],
  ['/var/lib/kubelet', '/var/lib/kubelet', "the kubelet's state"],
  ['/var/lib/kubelet/pods/x', '/var/lib/kubelet', 'pod volumes'],
  ['/run/systemd/system', '/run/systemd', 'transient systemd units'],
  ['/var/spool/cron/crontabs', '/var/spool/cron', 'crontabs'],
  ['/root/.ssh', '/root', "the superuser's keys"],
  ['/home/edge/.ssh', '/home/edge/.ssh', "a user's authorized_keys"],
  ['/var/lib/git/.ssh', '/var/lib/git/.ssh', "a service account's authorized_keys"],
  ['/etc/systemd/system', '/etc', 'systemd units'],
  ['/etc/cron.d', '/etc', 'cron jobs'],
  ['/etc/kubernetes/manifests', '/etc', 'kubeadm static pods'],
  ['/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs', '/var/lib/containerd', 'image layers'],
  ['/var/lib/dpkg', '/var/lib/dpkg', "dpkg's database and lock"],
]
for (const [root, found, why] of EXECUTED)
  test(`D15: a root at ${root} (${why}) is refused as inside ${found}`, async () => {
    assert.equal(systemDirectoryOf(root), found)
    const problem = await checkAgentRoot(root)
    assert.equal(problem?.kind, 'system', root)
    const where = found === root ? 'is a system directory' : `is inside ${found}, a system directory`
    assert.ok(problem.message.startsWith(`${JSON.stringify(root)} ${where}`), problem.message)
  })

test('D15: any directory named .ssh is refused, also when reached through a symlink', async () => {
  const dir = await tempDir()
  assert.equal(systemDirectoryOf(join(dir, 'home', 'edge', '.ssh')), join(dir, 'home', 'edge', '.ssh'))
  await mkdir(join(dir, 'home', 'edge', '.ssh'), { recursive: true })
  await symlink(join(dir, 'home', 'edge', '.ssh'), join(dir, 'keys'))
  const direct = await checkAgentRoot(join(dir, 'home', 'edge', '.ssh', 'sub'))
  assert.equal(direct?.kind, 'system')
  assert.match(direct.message, /is inside .*\/home\/edge\/\.ssh, a system directory/)
  const via = await checkAgentRoot(join(dir, 'keys', 'sub'))
  assert.equal(via?.kind, 'system')
  assert.match(via.message, /\(it resolves to .*\/\.ssh\/sub\) is inside/)
  assert.deepEqual(await readdir(join(dir, 'home', 'edge', '.ssh')), [], 'nothing was created')
})
