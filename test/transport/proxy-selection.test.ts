/**
 * Which proxy a connection goes through: client-go's precedence (kubeconfig `proxy-url`, else the
 * environment) and golang.org/x/net `http/httpproxy`'s NO_PROXY rules, checked entry by entry.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { bypassesProxy, displayProxy, selectProxy } from '../../src/transport/proxy-selection.ts'

const select = (server: string, proxyUrl: string | undefined, env: Record<string, string>) =>
  selectProxy(new URL(server), proxyUrl, env, 'kubeconfig /k')?.display

test('proxy-url wins over the environment and NO_PROXY does not apply to it', () => {
  const env = { HTTPS_PROXY: 'http://env:3128', NO_PROXY: 'api.example' }
  assert.equal(select('https://api.example:6443', 'http://kube:8080', env), 'http://kube:8080')
  assert.equal(select('https://127.0.0.1:6443', 'socks5://s', {}), 'socks5://s:1080')
})

test('HTTPS_PROXY serves https servers, HTTP_PROXY http ones; upper case first, empty counts as unset', () => {
  const env = { HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:2', HTTP_PROXY: 'http://plain:3' }
  assert.equal(select('https://api.example', undefined, env), 'http://upper:1')
  assert.equal(select('http://api.example', undefined, env), 'http://plain:3')
  assert.equal(
    select('https://api.example', undefined, { HTTPS_PROXY: '', https_proxy: 'http://lower:2' }),
    'http://lower:2',
  )
  assert.equal(select('https://api.example', undefined, { HTTP_PROXY: 'http://plain:3' }), undefined)
})

test('an environment value without a scheme is an HTTP proxy; socks5 and https are kept', () => {
  assert.equal(
    select('https://a.example', undefined, { HTTPS_PROXY: 'proxy.corp:3128' }),
    'http://proxy.corp:3128',
  )
  assert.equal(
    select('https://a.example', undefined, { HTTPS_PROXY: '10.0.0.1:3128' }),
    'http://10.0.0.1:3128',
  )
  assert.equal(select('https://a.example', undefined, { HTTPS_PROXY: 'socks5://s:1081' }), 'socks5://s:1081')
  assert.equal(select('https://a.example', undefined, { HTTPS_PROXY: 'https://p' }), 'https://p:443')
})

test('a CGI environment (REQUEST_METHOD) does not trust HTTP_PROXY', () => {
  assert.equal(
    select('http://a.example', undefined, { HTTP_PROXY: 'http://p:3', REQUEST_METHOD: 'GET' }),
    undefined,
  )
})

test('localhost and loopback servers never use an environment proxy', () => {
  const env = { HTTPS_PROXY: 'http://p:3128' }
  for (const server of [
    'https://localhost:6443',
    'https://127.0.0.1',
    'https://127.9.9.9:1',
    'https://[::1]:6443',
  ])
    assert.equal(select(server, undefined, env), undefined, server)
  assert.equal(select('https://10.1.2.3', undefined, env), 'http://p:3128')
})

test('NO_PROXY: domains match themselves and subdomains; a leading dot or *. only subdomains', () => {
  assert.equal(bypassesProxy('example.com', 'example.com', '443'), true)
  assert.equal(bypassesProxy('example.com', 'api.example.com', '443'), true)
  assert.equal(bypassesProxy('example.com', 'badexample.com', '443'), false)
  assert.equal(bypassesProxy('.example.com', 'example.com', '443'), false)
  assert.equal(bypassesProxy('.example.com', 'api.example.com', '443'), true)
  assert.equal(bypassesProxy('*.example.com', 'example.com', '443'), false)
  assert.equal(bypassesProxy('*.example.com', 'a.b.example.com', '443'), true)
  assert.equal(bypassesProxy(' Other.org , EXAMPLE.com ', 'api.example.com', '1'), true)
})

test('NO_PROXY: an entry with a port matches that port only', () => {
  assert.equal(bypassesProxy('example.com:6443', 'api.example.com', '6443'), true)
  assert.equal(bypassesProxy('example.com:6443', 'api.example.com', '443'), false)
  assert.equal(bypassesProxy('10.0.0.1:6443', '10.0.0.1', '6443'), true)
  assert.equal(bypassesProxy('10.0.0.1:6443', '10.0.0.1', '443'), false)
  assert.equal(bypassesProxy('[fd00::1]:6443', '[fd00::1]', '6443'), true)
  assert.equal(bypassesProxy('[fd00::1]:6443', '[fd00::1]', '443'), false)
})

test('NO_PROXY: IPs and CIDRs (v4 and v6) match addresses, not names', () => {
  assert.equal(bypassesProxy('10.0.0.0/8', '10.200.3.4', '443'), true)
  assert.equal(bypassesProxy('10.0.0.0/8', '11.0.0.1', '443'), false)
  assert.equal(bypassesProxy('192.168.1.7', '192.168.1.7', '443'), true)
  assert.equal(bypassesProxy('192.168.1.7', '192.168.1.8', '443'), false)
  assert.equal(bypassesProxy('fd00::/8', '[fd12::5]', '443'), true)
  assert.equal(bypassesProxy('fd00::1', '[fd00::1]', '443'), true)
  assert.equal(bypassesProxy('10.0.0.0/8', 'ten.example', '443'), false)
})

test('NO_PROXY: * matches everything; empty and malformed entries are ignored', () => {
  assert.equal(bypassesProxy('*', 'anything.example', '1'), true)
  assert.equal(bypassesProxy(',, ,:443,10.0.0.0/99', 'api.example', '443'), false)
  assert.equal(
    select('https://api.example', undefined, { HTTPS_PROXY: 'p:1', no_proxy: 'api.example' }),
    undefined,
  )
  assert.equal(
    select('https://api.example', undefined, { HTTPS_PROXY: 'p:1', NO_PROXY: 'x', no_proxy: 'api.example' }),
    'http://p:1',
  )
})

test('a proxy is displayed as scheme://host:port, never with its user or password', () => {
  const url = new URL('http://alice:pr0xy-pass@proxy.example:3128/path?q=1')
  assert.equal(displayProxy(url), 'http://proxy.example:3128')
  assert.equal(displayProxy(new URL('socks5://[fd00::1]')), 'socks5://[fd00::1]:1080')
})
