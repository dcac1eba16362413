/**
 * @module etcd — the control plane's single-member etcd 3.6 on loopback.
 *
 * Data lives in a fresh directory on `/dev/shm` (tmpfs) with `--unsafe-no-fsync`:
 * test data is disposable and fsync is the dominant cost of etcd on slow disks.
 * Ports and data directory are fixed for the object's lifetime, so {@link Etcd.stop}
 * followed by {@link Etcd.start} brings back the same member with the same data.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EdgeopError } from '../core/errors.ts'
import { trackTempDir, untrackTempDir } from './cleanup.ts'
import { freePorts, LOOPBACK } from './ports.ts'
import { ManagedProcess } from './process.ts'

/** etcd is healthy within a second or two; 30 s leaves room for a loaded 2-core machine. */
export const ETCD_START_TIMEOUT_MS = 30_000

/** Where etcd data goes: tmpfs when the machine has it. */
const DATA_PARENT = existsSync('/dev/shm') ? '/dev/shm' : tmpdir()

/** Options for {@link Etcd.create}. */
export interface EtcdOptions {
  /** Path of the `etcd` binary. */
  bin: string
  /** Directory for the log file. */
  workDir: string
}

/** One etcd member. */
export class Etcd {
  readonly url: string
  readonly dataDir: string
  readonly process: ManagedProcess

  private constructor(bin: string, workDir: string, dataDir: string, clientPort: number, peerPort: number) {
    this.url = `http://${LOOPBACK}:${clientPort}`
    this.dataDir = dataDir
    const peer = `http://${LOOPBACK}:${peerPort}`
    this.process = new ManagedProcess({
      name: 'etcd',
      command: bin,
      logFile: join(workDir, 'etcd.log'),
      args: [
        '--name=edgeop',
        `--data-dir=${dataDir}`,
        `--listen-client-urls=${this.url}`,
        `--advertise-client-urls=${this.url}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=edgeop=${peer}`,
        '--initial-cluster-state=new',
        '--unsafe-no-fsync=true',
        '--logger=zap',
        '--log-outputs=stderr',
        '--log-level=warn',
      ],
    })
  }

  /** Allocates ports and a data directory; does not start the process. */
  static async create(options: EtcdOptions): Promise<Etcd> {
    const [clientPort, peerPort] = await freePorts(2)
    const dataDir = await mkdtemp(join(DATA_PARENT, 'edgeop-etcd-'))
    trackTempDir(dataDir)
    return new Etcd(options.bin, options.workDir, dataDir, clientPort!, peerPort!)
  }

  /** Starts etcd and waits until `/health` reports healthy. */
  async start(timeoutMs = ETCD_START_TIMEOUT_MS): Promise<void> {
    this.process.start()
    await this.process.eventually(() => this.#healthy(), { what: 'etcd /health', timeoutMs })
  }

  /**
   * Stops the process; data and ports are kept for {@link Etcd.start}. `crash: true`
   * SIGKILLs it at once — what a test of "etcd went away" wants, and much faster: on
   * SIGTERM etcd waits several seconds for the apiservers' watch streams to drain.
   * Committed data survives a SIGKILL (tmpfs keeps the written pages).
   */
  async stop(options: { crash?: boolean } = {}): Promise<void> {
    await this.process.stop(options.crash ? 0 : undefined)
  }

  /** The store's current revision (= the newest Kubernetes resourceVersion). */
  async revision(): Promise<number> {
    const status = (await this.#post('/v3/maintenance/status', {})) as { header?: { revision?: string } }
    const revision = Number(status.header?.revision)
    if (!Number.isSafeInteger(revision))
      throw new EdgeopError(
        'EDGEOP_ERR_CONTROL_PLANE',
        `etcd status without a revision: ${JSON.stringify(status).slice(0, 300)}`,
        {
          step: 'etcd status',
        },
      )
    return revision
  }

  /**
   * Compacts history up to `revision` (default: the current revision), physically, so
   * every older revision is gone when this resolves. Returns the revision compacted to.
   * Compacting to an already compacted revision is not an error.
   */
  async compact(revision?: number): Promise<number> {
    const target = revision ?? (await this.revision())
    try {
      await this.#post('/v3/kv/compaction', { revision: String(target), physical: true })
    } catch (err) {
      if (!(err instanceof Error && /has been compacted/.test(err.message))) throw err
    }
    return target
  }

  /** Stops etcd and deletes its data directory. */
  async destroy(): Promise<void> {
    await this.stop()
    await rm(this.dataDir, { recursive: true, force: true })
    untrackTempDir(this.dataDir)
  }

  async #healthy(): Promise<boolean> {
    const body = await this.#call('GET', '/health')
    return (JSON.parse(body) as { health?: string }).health === 'true'
  }

  async #post(path: string, body: unknown): Promise<unknown> {
    return JSON.parse(await this.#call('POST', path, JSON.stringify(body)))
  }

  /** One request to etcd's HTTP/JSON gateway; rejects on non-2xx with the gateway's message. */
  #call(method: string, path: string, body?: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = request(`${this.url}${path}`, { method, agent: false, timeout: 10_000 }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('error', reject)
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          const status = res.statusCode ?? 0
          if (status >= 200 && status < 300) resolve(text)
          else
            reject(
              new EdgeopError(
                'EDGEOP_ERR_CONTROL_PLANE',
                `etcd ${method} ${path}: HTTP ${status}: ${text.slice(0, 300)}`,
                {
                  step: `etcd ${method} ${path}`,
                  retryable: status >= 500,
                },
              ),
            )
        })
      })
      req.on('timeout', () =>
        req.destroy(
          new EdgeopError('EDGEOP_ERR_TIMEOUT', `etcd ${method} ${path}: timed out`, {
            step: `etcd ${method} ${path}`,
            retryable: true,
          }),
        ),
      )
      req.on('error', reject)
      req.end(body)
    })
  }
}
