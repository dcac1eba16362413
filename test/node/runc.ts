/**
 * @module node/runc — runc driven directly on a bundle (test/node/oci-bundle.ts), with its state
 * in a directory of its own so that its containers are only the caller's; and where the kernel
 * accounts a container's memory (its memory cgroup, v1 or v2).
 */
import { execFile } from 'node:child_process'
import { access, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Where the cgroup hierarchies are mounted. */
const CGROUP_ROOT = '/sys/fs/cgroup'

/** What `runc state` reports. */
export interface ContainerState {
  id: string
  pid: number
  status: 'creating' | 'created' | 'running' | 'paused' | 'stopped'
}

/** runc with a private state directory. */
export class Runc {
  /** The runc executable. */
  readonly binary: string
  /** Its state directory (`runc --root`). */
  readonly root: string

  constructor(binary: string, root: string) {
    this.binary = binary
    this.root = root
  }

  /** The argv of `runc run` in the foreground: the container's stdio are the command's own. */
  runArgv(id: string, bundle: string): string[] {
    return [this.binary, '--root', this.root, 'run', '--bundle', bundle, id]
  }

  /** `runc state <id>`. */
  async state(id: string): Promise<ContainerState> {
    const { stdout } = await run(this.binary, ['--root', this.root, 'state', id])
    return JSON.parse(stdout) as ContainerState
  }

  /** `runc delete --force <id>`: kills the container if it still runs and removes it and its cgroup. */
  async delete(id: string): Promise<void> {
    await run(this.binary, ['--root', this.root, 'delete', '--force', id]).catch(() => undefined)
  }
}

/** A memory cgroup's limit and usage as the kernel reports them, in bytes. */
export interface CgroupMemory {
  limit: number
  usage: number
  /** Usage less inactive file pages: what the kubelet evicts on and reports as the working set. */
  workingSet: number
}

/** The memory accounting of the cgroup at `cgroupsPath` (cgroup v1's memory controller, or v2). */
export async function cgroupMemory(cgroupsPath: string): Promise<CgroupMemory> {
  const v2 = await access(join(CGROUP_ROOT, 'cgroup.controllers')).then(
    () => true,
    () => false,
  )
  const dir = v2 ? join(CGROUP_ROOT, cgroupsPath) : join(CGROUP_ROOT, 'memory', cgroupsPath)
  const read = (file: string): Promise<string> => readFile(join(dir, file), 'utf8')
  const stat = new Map(
    (await read('memory.stat'))
      .trim()
      .split('\n')
      .map((l) => l.split(' ') as [string, string]),
  )
  const limitText = (await read(v2 ? 'memory.max' : 'memory.limit_in_bytes')).trim()
  const usage = Number((await read(v2 ? 'memory.current' : 'memory.usage_in_bytes')).trim())
  const inactiveFile = Number(stat.get(v2 ? 'inactive_file' : 'total_inactive_file') ?? 0)
  return {
    limit: limitText === 'max' ? Number.POSITIVE_INFINITY : Number(limitText),
    usage,
    workingSet: Math.max(0, usage - inactiveFile),
  }
}
