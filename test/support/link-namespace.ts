/**
 * @module link-namespace — a network namespace joined to this one by a veth pair, for tests of what
 * a real link does to a client: the client runs inside (`ip netns exec`), reaches a forwarder on the
 * host end, and the test drops chosen TCP flows there without a reset, as a NAT that forgot them.
 *
 * Needs root, `ip` (iproute2) and `nft`; nft comes from Debian's packages extracted into the build
 * cache (build/tools/debian.ts), not installed. Rules live in the namespace's own nftables, so
 * nothing outside it changes; {@link LinkNamespace.destroy} removes the namespace and the pair.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { fetchDebs } from '../../build/tools/debian.ts'
import { joinShaped, type LinkShape } from './link-shape.ts'

/** nftables and the libraries its binary needs, from Debian bookworm. */
const NFT_PACKAGES = [
  'nftables',
  'libnftables1',
  'libnftnl11',
  'libmnl0',
  'libjansson4',
  'libxtables12',
  'libedit2',
  'libgmp10',
  'libbsd0',
  'libmd0',
].map((p) => `${p}:amd64`)

let made = 0

/** One accepted connection from the namespace. */
export interface ForwardedFlow {
  /** The client's port inside the namespace. */
  port: number
  /** `performance.now()` when it was accepted. */
  openedAt: number
  socket: Socket
}

/** A namespace, its link and a TCP forwarder on the host end. */
export class LinkNamespace {
  readonly name: string
  /** The host end's address, where the forwarder listens. */
  readonly hostIp: string
  readonly flows: ForwardedFlow[] = []
  readonly #hostDev: string
  readonly #nft: { bin: string; env: NodeJS.ProcessEnv }
  #server: Server | undefined

  private constructor(
    name: string,
    hostDev: string,
    hostIp: string,
    nft: { bin: string; env: NodeJS.ProcessEnv },
  ) {
    this.name = name
    this.#hostDev = hostDev
    this.hostIp = hostIp
    this.#nft = nft
  }

  /** Creates the namespace, the veth pair (10.231.x.1 host, .2 inside) and an empty nftables table inside. */
  static create(): LinkNamespace {
    const root = fetchDebs({ name: 'nftables', packages: NFT_PACKAGES })
    const nft = {
      bin: join(root, 'usr/sbin/nft'),
      env: { ...process.env, LD_LIBRARY_PATH: join(root, 'usr/lib/x86_64-linux-gnu') },
    }
    const id = `${process.pid % 100_000}${made++}`
    const name = `edgeop-link-${id}`
    const hostDev = `eo${id}h`
    const nsDev = `eo${id}n`
    const subnet = `10.231.${(process.pid + made) % 250}`
    const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'inherit'] })
    ip('netns', 'add', name)
    const ns = new LinkNamespace(name, hostDev, `${subnet}.1`, nft)
    try {
      const inner = `${subnet}.2`
      ip('link', 'add', hostDev, 'type', 'veth', 'peer', 'name', nsDev)
      ip('link', 'set', nsDev, 'netns', name)
      ip('addr', 'add', `${ns.hostIp}/30`, 'dev', hostDev)
      ip('link', 'set', hostDev, 'up')
      ip('-n', name, 'addr', 'add', `${inner}/30`, 'dev', nsDev)
      ip('-n', name, 'link', 'set', nsDev, 'up')
      ip('-n', name, 'link', 'set', 'lo', 'up')
      ns.#nftRun(
        'table inet edgeop {\n' +
          ' chain out { type filter hook output priority 0; policy accept; }\n' +
          ' chain in { type filter hook input priority 0; policy accept; }\n}\n',
      )
    } catch (err) {
      ns.destroy()
      throw err
    }
    return ns
  }

  /**
   * Starts the forwarder on the host end to `127.0.0.1:targetPort`; resolves with its port. With
   * `shape`, each direction is delayed by half the RTT and paced to the bandwidth (`link-shape.ts`).
   */
  async forwardTo(targetPort: number, shape?: LinkShape): Promise<number> {
    const server = createServer((client) => {
      const upstream = connect({ host: '127.0.0.1', port: targetPort })
      this.flows.push({ port: client.remotePort ?? 0, openedAt: performance.now(), socket: client })
      if (shape) return joinShaped(client, upstream, shape)
      client.pipe(upstream).pipe(client)
      const end = () => {
        client.destroy()
        upstream.destroy()
      }
      client.on('error', end).on('close', end)
      upstream.on('error', end).on('close', end)
    })
    this.#server = server
    server.listen(0, this.hostIp)
    await new Promise<void>((r) => void server.once('listening', r))
    return (server.address() as { port: number }).port
  }

  /** Drops, in both directions and without a reset, the flows from these client ports (inside the namespace). */
  dropFlows(ports: readonly number[]): void {
    const set = `{ ${ports.join(', ')} }`
    this.#nftRun(
      `add rule inet edgeop out tcp sport ${set} drop\nadd rule inet edgeop in tcp dport ${set} drop\n`,
    )
  }

  /** Drops this share (0–1) of the TCP packets in each direction inside the namespace, at random (nftables numgen). */
  setLoss(share: number): void {
    const perMille = Math.round(share * 1000)
    if (perMille <= 0) return
    this.#nftRun(
      `add rule inet edgeop out meta l4proto tcp numgen random mod 1000 < ${perMille} drop\n` +
        `add rule inet edgeop in meta l4proto tcp numgen random mod 1000 < ${perMille} drop\n`,
    )
  }

  /** Runs `argv` inside the namespace. */
  spawn(argv: readonly string[], env: NodeJS.ProcessEnv): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.name, ...argv], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  }

  /** Stops the forwarder and removes the namespace (and with it both ends of the pair). */
  destroy(): void {
    this.#server?.close()
    for (const f of this.flows) f.socket.destroy()
    try {
      execFileSync('ip', ['netns', 'del', this.name], { stdio: 'ignore' })
    } catch {
      // already gone
    }
    try {
      execFileSync('ip', ['link', 'del', this.#hostDev], { stdio: 'ignore' })
    } catch {
      // went with the namespace
    }
  }

  #nftRun(script: string): void {
    execFileSync('ip', ['netns', 'exec', this.name, this.#nft.bin, '-f', '-'], {
      input: script,
      env: this.#nft.env,
      stdio: ['pipe', 'ignore', 'inherit'],
    })
  }
}
