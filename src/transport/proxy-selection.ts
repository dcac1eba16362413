/**
 * @module proxy-selection — which proxy, if any, the connections to an API server go through, with client-go's precedence and NO_PROXY rules.
 *
 * client-go (`rest.Config.Proxy`, `transport/cache.go`): the kubeconfig's `proxy-url` is used for every
 * request to that cluster, NO_PROXY does not apply to it; without one, `http.ProxyFromEnvironment`
 * decides, i.e. golang.org/x/net `http/httpproxy`: `HTTPS_PROXY` for `https:` servers, `HTTP_PROXY` for
 * `http:` ones (upper case first, then lower case, an empty value counts as unset), a value without a
 * scheme meaning `http://`, and none for a loopback or `localhost` server or one that `NO_PROXY` names.
 */
import { BlockList, isIP } from 'node:net'
import { domainToASCII } from 'node:url'
import { EdgeopError } from '../core/errors.ts'

/** Proxy schemes a kubeconfig's `proxy-url` may use (client-go `clientcmd` refuses any other). */
export const PROXY_URL_SCHEMES = ['http:', 'https:', 'socks5:'] as const

/**
 * Proxy schemes an environment value may use; anything else is read as `host[:port]` of an HTTP
 * proxy (httpproxy `parseProxy`). `socks5h:` is accepted as `socks5:`: edgeop always lets the
 * SOCKS server resolve the name, as Go's SOCKS dialer does.
 */
const ENV_PROXY_SCHEMES = new Set(['http:', 'https:', 'socks5:', 'socks5h:'])

/** Default ports when a URL gives none (httpproxy `portMap`). */
const DEFAULT_PORTS: Record<string, string> = {
  'http:': '80',
  'https:': '443',
  'socks5:': '1080',
  'socks5h:': '1080',
}

/** The proxy environment variables client-go reads; upper case wins (httpproxy `FromEnvironment`). */
export interface ProxyEnvironment {
  /** Proxy for `https:` servers. */
  HTTPS_PROXY?: string | undefined
  /** Read when `HTTPS_PROXY` is unset or empty. */
  https_proxy?: string | undefined
  /** Proxy for `http:` servers. */
  HTTP_PROXY?: string | undefined
  /** Read when `HTTP_PROXY` is unset or empty. */
  http_proxy?: string | undefined
  /** Comma-separated hosts, domains, IPs and CIDRs (each with an optional port) reached directly; `*` = all. */
  NO_PROXY?: string | undefined
  /** Read when `NO_PROXY` is unset or empty. */
  no_proxy?: string | undefined
  /** Set in a CGI handler; `HTTP_PROXY` is then not trusted (golang.org/s/cgihttpproxy). */
  REQUEST_METHOD?: string | undefined
}

/** A proxy to connect through. */
export interface ProxyRoute {
  /** The parsed proxy URL; its username and password are credentials. */
  url: URL
  /** The proxy for messages: scheme, host and port, never the user info. */
  display: string
  /** Where it came from, for messages: `proxy-url` or the environment variable's name. */
  origin: string
}

/** `scheme://host:port` of a proxy URL, without user info, path or query: safe for logs and errors. */
export function displayProxy(url: URL): string {
  return `${url.protocol}//${url.hostname}:${url.port || DEFAULT_PORTS[url.protocol] || ''}`
}

/**
 * Parses a kubeconfig `proxy-url`.
 *
 * @throws EdgeopError `EDGEOP_ERR_CONFIG` when it is not a URL or its scheme is not one of
 *   {@link PROXY_URL_SCHEMES}; the message quotes the scheme at most, never the URL (it may carry a password).
 */
export function parseProxyUrl(raw: string, source: string): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch (cause) {
    throw new EdgeopError('EDGEOP_ERR_CONFIG', `${source}: proxy-url is not a URL`, {
      step: 'create transport',
      cause: errorWithoutInput(cause),
    })
  }
  if (!(PROXY_URL_SCHEMES as readonly string[]).includes(url.protocol)) {
    const scheme = /^[a-z][a-z0-9+.-]{0,15}:$/.test(url.protocol) ? url.protocol : 'its'
    throw new EdgeopError(
      'EDGEOP_ERR_CONFIG',
      `${source}: proxy-url scheme ${scheme} is not supported; use http, https or socks5 (as client-go)`,
      { step: 'create transport' },
    )
  }
  if (!url.hostname) {
    throw new EdgeopError('EDGEOP_ERR_CONFIG', `${source}: proxy-url names no host`, {
      step: 'create transport',
    })
  }
  return url
}

/**
 * The proxy for connections to `server`: the kubeconfig's `proxyUrl` when set (NO_PROXY does not
 * apply to it), else the environment's (see the module comment); undefined = connect directly.
 *
 * @throws EdgeopError `EDGEOP_ERR_CONFIG` for a `proxyUrl` {@link parseProxyUrl} refuses.
 */
export function selectProxy(
  server: URL,
  proxyUrl: string | undefined,
  env: ProxyEnvironment,
  source: string,
): ProxyRoute | undefined {
  if (proxyUrl) {
    const url = parseProxyUrl(proxyUrl, source)
    return { url, display: displayProxy(url), origin: 'proxy-url' }
  }
  const pick = (upper: keyof ProxyEnvironment, lower: keyof ProxyEnvironment) =>
    env[upper]
      ? { name: upper, value: env[upper] }
      : env[lower]
        ? { name: lower, value: env[lower] }
        : undefined
  let chosen: { name: string; value: string } | undefined
  if (server.protocol === 'https:') chosen = pick('HTTPS_PROXY', 'https_proxy')
  else if (server.protocol === 'http:' && !env.REQUEST_METHOD) chosen = pick('HTTP_PROXY', 'http_proxy')
  if (!chosen) return undefined
  const url = parseEnvironmentProxy(chosen.value)
  if (!url) return undefined
  const noProxy = env.NO_PROXY || env.no_proxy || ''
  const port = server.port || DEFAULT_PORTS[server.protocol] || ''
  if (bypassesProxy(noProxy, server.hostname, port)) return undefined
  return { url, display: displayProxy(url), origin: chosen.name }
}

/** An environment proxy value as httpproxy reads it; undefined when it cannot be read at all (Go ignores it then). */
function parseEnvironmentProxy(value: string): URL | undefined {
  try {
    const url = new URL(value)
    if (ENV_PROXY_SCHEMES.has(url.protocol) && url.hostname) return url
  } catch {
    // read as host[:port] below
  }
  try {
    const url = new URL(`http://${value}`)
    return url.hostname ? url : undefined
  } catch {
    return undefined
  }
}

/** One NO_PROXY entry, parsed. */
type NoProxyEntry =
  | { kind: 'all' }
  | { kind: 'cidr'; list: BlockList }
  | { kind: 'ip'; list: BlockList; port: string }
  | { kind: 'domain'; suffix: string; port: string; matchesItself: boolean }

/**
 * Parses a NO_PROXY value as httpproxy does: comma-separated entries, trimmed and lower-cased;
 * `*` matches everything; an IP or CIDR (v4 or v6) matches addresses; `host:port` and
 * `[v6]:port` restrict an entry to that port; a domain `example.com` matches itself and its
 * subdomains, `.example.com` and `*.example.com` only its subdomains. Unreadable entries are ignored.
 */
export function parseNoProxy(value: string): NoProxyEntry[] {
  const entries: NoProxyEntry[] = []
  for (const raw of value.split(',')) {
    const p = raw.trim().toLowerCase()
    if (!p) continue
    if (p === '*') return [{ kind: 'all' }]
    const slash = p.indexOf('/')
    if (slash > 0) {
      const addr = p.slice(0, slash)
      const prefix = Number(p.slice(slash + 1))
      const family = isIP(addr)
      if (family && Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 4 ? 32 : 128)) {
        const list = new BlockList()
        list.addSubnet(addr, prefix, family === 4 ? 'ipv4' : 'ipv6')
        entries.push({ kind: 'cidr', list })
      }
      continue
    }
    let host = p
    let port = ''
    const hostPort = /^\[([^\]]*)\]:(\d*)$/.exec(p) ?? /^([^:]*):(\d*)$/.exec(p)
    if (hostPort) {
      host = hostPort[1]!
      port = hostPort[2]!
      if (!host) continue
    } else if (p.startsWith('[') && p.endsWith(']')) host = p.slice(1, -1)
    const family = isIP(host)
    if (family) {
      const list = new BlockList()
      list.addAddress(host, family === 4 ? 'ipv4' : 'ipv6')
      entries.push({ kind: 'ip', list, port })
      continue
    }
    if (host.startsWith('*.')) host = host.slice(1)
    const matchesItself = !host.startsWith('.')
    const suffix = domainToASCII(matchesItself ? `.${host}` : host) || (matchesItself ? `.${host}` : host)
    entries.push({ kind: 'domain', suffix, port, matchesItself })
  }
  return entries
}

/**
 * Whether a connection to `hostname:port` goes direct under this NO_PROXY value, or because the
 * host is `localhost` or a loopback address (httpproxy `useProxy`). `hostname` is a URL's hostname
 * (IPv6 in brackets, names already in ASCII).
 */
export function bypassesProxy(noProxy: string, hostname: string, port: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  if (host === 'localhost') return true
  const family = isIP(host)
  const type = family === 6 ? 'ipv6' : 'ipv4'
  if (family && LOOPBACK.check(host, type)) return true
  for (const e of parseNoProxy(noProxy)) {
    if (e.kind === 'all') return true
    if (family && e.kind === 'cidr' && e.list.check(host, type)) return true
    if (family && e.kind === 'ip' && e.list.check(host, type) && (!e.port || e.port === port)) return true
    if (e.kind === 'domain' && (host.endsWith(e.suffix) || (e.matchesItself && host === e.suffix.slice(1))))
      if (!e.port || e.port === port) return true
  }
  return false
}

/** Loopback addresses (Go `net.IP.IsLoopback`): 127.0.0.0/8 and ::1. */
const LOOPBACK = new BlockList()
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4')
LOOPBACK.addAddress('::1', 'ipv6')

/** A URL parse error without its `input` (Node puts the whole string there, password included). */
function errorWithoutInput(cause: unknown): Error {
  const code = (cause as { code?: unknown })?.code
  return Object.assign(new Error('invalid URL'), typeof code === 'string' ? { code } : {})
}
