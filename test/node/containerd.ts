/**
 * @module node/containerd — a containerd of the test's own: its root, state and sockets in a
 * directory of the caller's, its process in a mount and network namespace of its own (`unshare`)
 * whose /run is a private tmpfs, because the runc shim puts its sockets under /run/containerd
 * whatever the configuration says. Its containers get their network namespaces from it (loopback
 * only: no CNI here), so nothing of the machine's network or /run changes. The CRI and NRI plugins
 * are off: it is driven with `ctr`.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { access, mkdir, readdir, rmdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** How long containerd may take to open its socket (it loads every plugin first). */
const START_TIMEOUT_MS = 60_000
/** How often the socket's appearance is checked while it starts. */
const START_POLL_MS = 100
/** How long containerd may take to stop on SIGTERM before it is killed. */
const STOP_GRACE_MS = 10_000
/** Where the cgroup hierarchies are mounted. */
const CGROUP_ROOT = '/sys/fs/cgroup'

/** A running containerd and the `ctr` that talks to it. */
export interface Containerd {
  /** Its gRPC socket. */
  readonly address: string
  /**
   * The containerd namespace of this instance's images and containers (`ctr -n`), this run's own:
   * ctr's containers get the cgroup `/<namespace>/<container id>`.
   */
  readonly namespace: string
  /** `ctr -a <address> -n <namespace> <args>`; resolves with stdout, rejects with stderr in the message. */
  ctr(args: readonly string[]): Promise<string>
  /**
   * SIGTERM, then SIGKILL after {@link STOP_GRACE_MS}; resolves once it has exited and the
   * namespace's parent cgroups, which containerd leaves, are removed (if empty).
   */
  stop(): Promise<void>
}

/**
 * Starts containerd (`binDir` holds containerd, ctr, containerd-shim-runc-v2 and runc) with
 * everything under `dir`; resolves once its socket is there.
 */
export async function startContainerd(binDir: string, dir: string): Promise<Containerd> {
  const address = join(dir, 'containerd.sock')
  const namespace = `edgeop-test-${randomBytes(4).toString('hex')}`
  await mkdir(dir, { recursive: true })
  const config = join(dir, 'config.toml')
  await writeFile(
    config,
    [
      'version = 3',
      `root = ${JSON.stringify(join(dir, 'root'))}`,
      `state = ${JSON.stringify(join(dir, 'state'))}`,
      'disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images", "io.containerd.nri.v1.nri"]',
      '[grpc]',
      `  address = ${JSON.stringify(address)}`,
      '[ttrpc]',
      `  address = ${JSON.stringify(`${address}.ttrpc`)}`,
      '',
    ].join('\n'),
  )
  const path = `${binDir}:${process.env.PATH ?? '/usr/bin:/bin'}`
  const child: ChildProcess = spawn(
    'unshare',
    [
      '--mount',
      '--net',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      'mount -t tmpfs -o mode=755 tmpfs /run && ip link set lo up && exec containerd --config "$1"',
      'containerd',
      config,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PATH: path } },
  )
  let stderr = ''
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-8192)
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let gone = false
  void exited.then(() => {
    gone = true
  })
  const stop = async (): Promise<void> => {
    if (gone) return
    child.kill('SIGTERM')
    const killed = delay(STOP_GRACE_MS).then(() => child.kill('SIGKILL'))
    await Promise.race([exited, killed])
    await exited
    const hierarchies = await readdir(CGROUP_ROOT).catch(() => [])
    for (const dir of [CGROUP_ROOT, ...hierarchies.map((h) => join(CGROUP_ROOT, h))])
      await rmdir(join(dir, namespace)).catch(() => undefined)
  }
  const end = Date.now() + START_TIMEOUT_MS
  while (
    !(await access(address).then(
      () => true,
      () => false,
    ))
  ) {
    if (gone || Date.now() >= end) {
      await stop()
      throw new Error(`containerd did not open ${address} within ${START_TIMEOUT_MS} ms; its log: ${stderr}`)
    }
    await delay(START_POLL_MS)
  }
  const ctrBinary = join(binDir, 'ctr')
  return {
    address,
    namespace,
    stop,
    async ctr(args) {
      try {
        return (await run(ctrBinary, ['-a', address, '-n', namespace, ...args], { encoding: 'utf8' })).stdout
      } catch (err) {
        const e = err as Error & { stderr?: string }
        throw new Error(`ctr ${args.join(' ')} failed: ${e.stderr ?? e.message}; containerd's log: ${stderr}`)
      }
    },
  }
}
