/**
 * The arm64 single executable (build/sea.ts for arm64: the npm platform package's Node + the
 * blob made under qemu) is an AArch64 ELF that answers `version` and `crd` under Debian's
 * qemu-user-static with Debian's arm64 libc as sysroot, with nothing on stderr (a rejected
 * code cache would say so there). Needs `npm run build:sea` (npm test runs it).
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { open } from 'node:fs/promises'
import { test } from 'node:test'
import { seaPath } from '../../build/sea.ts'
import { type Arch, commandFor, elfMachineOf, HOST_ARCH } from '../../build/targets.ts'

/** ELF e_machine: the 16-bit little-endian field at offset 18 (System V gABI). */
async function elfMachine(file: string): Promise<number> {
  const fd = await open(file)
  try {
    const { buffer } = await fd.read(Buffer.alloc(20), 0, 20, 0)
    assert.equal(buffer.subarray(0, 4).toString('latin1'), '\x7fELF', `${file} is an ELF file`)
    return buffer.readUInt16LE(18)
  } finally {
    await fd.close()
  }
}

function run(arch: Arch, args: string[]): { stdout: string; stderr: string; status: number | null } {
  const [cmd, ...rest] = commandFor(arch, [seaPath(arch), ...args])
  return spawnSync(cmd!, rest, { encoding: 'utf8' })
}

test('the executables are ELF binaries of their own architecture', async () => {
  assert.equal(await elfMachine(seaPath('arm64')), elfMachineOf('arm64'))
  assert.equal(await elfMachine(seaPath(HOST_ARCH)), elfMachineOf(HOST_ARCH))
  assert.notEqual(elfMachineOf('arm64'), elfMachineOf('amd64'))
})

test('arm64: `edgeop version` answers under qemu, as linux/arm64 with the embedded V8 flags, stderr silent', () => {
  const r = run('arm64', ['version'])
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stderr, '')
  assert.match(r.stdout, /^edgeop \d+\.\d+\.\d+ \(node v24\.[^,]*, linux\/arm64, --optimize-for-size\)$/m)
})

test('arm64: `edgeop crd` prints the same CRDs as the host executable', () => {
  const arm = run('arm64', ['crd'])
  assert.equal(arm.status, 0, arm.stderr)
  assert.match(arm.stdout, /name: nodeconfigs\.platform\.example\.com/)
  assert.equal(arm.stdout, run(HOST_ARCH, ['crd']).stdout)
})
