/**
 * @module proxy-servers — real forward proxies for the proxy tests: tinyproxy (HTTP CONNECT) and
 * microsocks (SOCKS5), from Debian's packages, extracted into the build cache (build/tools/debian.ts),
 * never installed on the system. Each runs in the foreground as a child of the test and can be
 * stopped and started again on the same port (a proxy that restarts).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fetchDebs } from '../../build/tools/debian.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { freePort, LOOPBACK } from './ports.ts'

/** The Debian packages holding the two proxies (bookworm: tinyproxy 1.11.1, microsocks 1.0.3). */
const PROXY_PACKAGES = ['tinyproxy-bin:amd64', 'microsocks:amd64']

/** A proxy process on a fixed loopback port. */
export interface ProxyServer {
  /** The proxy's URL with the user and password it requires, e.g. `socks5://u:p@127.0.0.1:1080`. */
  readonly url: string
  readonly port: number
  /** Stops the process (SIGKILL: every tunnel through it breaks at once). */
  stop(): Promise<void>
  /** Starts it again on the same port. */
  start(): Promise<void>
  /** What the proxy logged: tinyproxy's `CONNECT host:port` lines, microsocks' `connected to host:port`. */
  log(): string
}

/** Where the packages are extracted (fetched on first use). */
function proxyRoot(): string {
  return fetchDebs({ name: 'proxies', packages: PROXY_PACKAGES })
}

function server(
  scheme: string,
  user: { name: string; password: string },
  port: number,
  argv: () => string[],
  logFile?: string,
): ProxyServer {
  let child: ChildProcess | undefined
  let stderr = ''
  const self: ProxyServer = {
    url: `${scheme}://${encodeURIComponent(user.name)}:${encodeURIComponent(user.password)}@${LOOPBACK}:${port}`,
    port,
    async start() {
      const [command, ...args] = argv()
      child = spawn(command!, args, { stdio: ['ignore', 'ignore', 'pipe'] })
      child.stderr?.setEncoding('utf8').on('data', (d: string) => {
        stderr += d
      })
      await eventually(() => listening(port), {
        timeoutMs: 10_000,
        what: `${scheme} proxy listens on ${port}`,
      })
    },
    async stop() {
      const c = child
      child = undefined
      if (!c || c.exitCode !== null) return
      const exited = once(c, 'exit')
      c.kill('SIGKILL')
      await exited
    },
    log: () => (logFile ? readFileSync(logFile, 'utf8') : stderr),
  }
  return self
}

/** Starts tinyproxy on a free loopback port, requiring `user` (Basic) and allowing CONNECT to any port. */
export async function startTinyproxy(user: { name: string; password: string }): Promise<ProxyServer> {
  const root = proxyRoot()
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'edgeop-tinyproxy-'))
  const logFile = join(dir, 'tinyproxy.log')
  const conf = join(dir, 'tinyproxy.conf')
  // No ConnectPort line: tinyproxy then allows CONNECT to every port (the API server is not on 443).
  writeFileSync(
    conf,
    [
      `Port ${port}`,
      `Listen ${LOOPBACK}`,
      'Timeout 600',
      `LogFile "${logFile}"`,
      'LogLevel Connect',
      'MaxClients 100',
      `Allow ${LOOPBACK}`,
      `BasicAuth ${user.name} ${user.password}`,
      '',
    ].join('\n'),
  )
  writeFileSync(logFile, '')
  const s = server('http', user, port, () => [join(root, 'usr/bin/tinyproxy'), '-d', '-c', conf], logFile)
  await s.start()
  return s
}

/** Starts microsocks on a free loopback port, requiring `user` (RFC 1929). */
export async function startMicrosocks(user: { name: string; password: string }): Promise<ProxyServer> {
  const root = proxyRoot()
  const port = await freePort()
  const s = server('socks5', user, port, () => [
    join(root, 'usr/bin/microsocks'),
    '-i',
    LOOPBACK,
    '-p',
    String(port),
    '-u',
    user.name,
    '-P',
    user.password,
  ])
  await s.start()
  return s
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: LOOPBACK, port })
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })
}
