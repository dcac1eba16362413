/**
 * @module replay — a watch stream recorded once from the real apiserver in both wire formats, and a
 * local HTTP server that replays it to one peer at a time at full speed (watch decoding
 * measured with no apiserver in the loop).
 *
 * Recording: two streaming-list watches on the same namespace (JSON and protobuf) receive the
 * namespace's Pods as initial events and the bookmark that ends them; then the driver merge-patches
 * the Pods `events` times and both streams record the same MODIFIED events (periodic bookmarks are
 * dropped). The namespace's list is fetched in both formats before the writes.
 *
 * Serving (plain HTTP on loopback, no auth): the format is the one the request's `Accept` asks for.
 * A list gets the recorded list; a streaming-list watch (`sendInitialEvents=true`) gets the initial
 * events and bookmark at once; the recorded MODIFIED events are held until {@link ReplayServer.release}
 * and then written in one go, as fast as the socket takes them. The watch stays open afterwards (a
 * closed watch would make a peer relist). Only the first watch of a session gets the events.
 */
import { writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  ACCEPT,
  type ApiTarget,
  apiGet,
  apiGetBody,
  EventSplitter,
  type Wire,
  type WireEvent,
} from './wire.ts'

/** One format's recording. */
export interface Recording {
  list: Buffer
  /** Streaming list: the initial ADDED events and the bookmark that ends them. */
  initial: Buffer
  /** The MODIFIED events, concatenated as on the wire. */
  events: Buffer
  count: number
}

export type Recordings = Record<Wire, Recording>

const CONTENT_TYPE: Record<Wire, { list: string; watch: string }> = {
  json: { list: 'application/json', watch: 'application/json' },
  protobuf: {
    list: 'application/vnd.kubernetes.protobuf',
    watch: 'application/vnd.kubernetes.protobuf;stream=watch',
  },
}

/** Records `events` MODIFIED events of the Pods in `namespace`, in both formats. */
export async function recordWatch(
  target: ApiTarget,
  namespace: string,
  events: number,
  write: (i: number) => Promise<void>,
  log: (line: string) => void,
): Promise<Recordings> {
  const path = `/api/v1/namespaces/${namespace}/pods`
  const lists = {
    json: await apiGetBody(target, path, ACCEPT.json),
    protobuf: await apiGetBody(target, path, ACCEPT.protobuf),
  }
  const ac = new AbortController()
  const query = '?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true'
  const streams = (['json', 'protobuf'] as const).map((wire) => {
    const initial: Buffer[] = []
    const modified: Buffer[] = []
    let initialDone!: () => void
    let allDone!: () => void
    const initialEnd = new Promise<void>((r) => (initialDone = r))
    const done = new Promise<void>((r) => (allDone = r))
    const reading = (async () => {
      const res = await apiGet(target, path + query, `${ACCEPT[wire]};stream=watch`, ac.signal)
      const split = new EventSplitter(wire)
      let inInitial = true
      try {
        for await (const chunk of res) {
          for (const e of split.push(chunk as Buffer) as WireEvent[]) {
            if (inInitial) {
              initial.push(e.bytes)
              if (e.initialEnd) {
                inInitial = false
                initialDone()
                if (events === 0) allDone()
              }
            } else if (e.type === 'MODIFIED') {
              modified.push(e.bytes)
              if (modified.length === events) allDone()
            }
          }
        }
      } catch (err) {
        if (!ac.signal.aborted) throw err
      }
    })()
    return { wire, initial, modified, initialEnd, done, reading }
  })
  const deadline = (ms: number, what: string) =>
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`recording: ${what}`)), ms).unref())
  try {
    await Promise.race([
      Promise.all(streams.map((s) => s.initialEnd)),
      deadline(60_000, 'no end of initial events within 60 s'),
      ...streams.map((s) => s.reading.then(() => Promise.reject(new Error(`${s.wire} watch ended early`)))),
    ])
    log(`  recording ${events.toLocaleString('en')} MODIFIED events in JSON and protobuf …`)
    const CONCURRENCY = 16
    let next = 0
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < events) await write(next++)
      }),
    )
    // A watch the apiserver ends early (its watch cache closes a watcher that falls behind) must fail
    // the recording: the deadline's timer is unref'd, so with both watches closed and the writes done
    // nothing else keeps the process alive, and it exited with this await unsettled.
    await Promise.race([
      Promise.all(streams.map((s) => s.done)),
      deadline(120_000, 'not every event arrived within 120 s of the last write'),
      ...streams.map((s) =>
        s.reading.then(() =>
          Promise.reject(
            new Error(`recording: the ${s.wire} watch ended after ${s.modified.length} of ${events} events`),
          ),
        ),
      ),
    ])
  } finally {
    ac.abort()
  }
  const out = {} as Recordings
  for (const s of streams)
    out[s.wire] = {
      list: lists[s.wire],
      initial: Buffer.concat(s.initial),
      events: Buffer.concat(s.modified.slice(0, events)),
      count: events,
    }
  return out
}

/** The local server replaying a {@link Recordings}; one session (one peer) at a time. */
export class ReplayServer {
  readonly #rec: Recordings
  readonly #server: Server
  #release: (() => void) | undefined
  #released!: Promise<void>
  #served = false
  #open = new Set<ServerResponse>()
  /** Formats served this session: `list json`, `watch protobuf`, … */
  served: string[] = []
  port = 0

  constructor(rec: Recordings) {
    this.#rec = rec
    this.#server = createServer((req, res) => this.#handle(req, res))
    this.reset()
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r))
    this.port = (this.#server.address() as AddressInfo).port
  }

  /** A kubeconfig file for this server (plain HTTP, no credentials). */
  async kubeconfig(): Promise<string> {
    const file = join(tmpdir(), `edgeop-bench-replay-${process.pid}-${this.port}.kubeconfig`)
    const server = `http://127.0.0.1:${this.port}`
    await writeFile(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        // client-node refuses plain HTTP unless TLS verification is marked as skipped.
        `clusters: [{name: replay, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]`,
        'users: [{name: replay, user: {}}]',
        'contexts: [{name: replay, context: {cluster: replay, user: replay, namespace: default}}]',
        'current-context: replay',
        '',
      ].join('\n'),
    )
    return file
  }

  /** A new session: the next watch gets the events again, after the next {@link release}. */
  reset(): void {
    for (const res of this.#open) res.destroy()
    this.#open.clear()
    this.#served = false
    this.served = []
    this.#released = new Promise<void>((r) => (this.#release = r))
  }

  /** Lets the held watch write its events. */
  release(): void {
    this.#release?.()
  }

  async close(): Promise<void> {
    this.reset()
    await new Promise<void>((r) => this.#server.close(() => r()))
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://replay')
    const wire: Wire = /protobuf/.test(req.headers.accept ?? '') ? 'protobuf' : 'json'
    const rec = this.#rec[wire]
    if (!/^\/api\/v1\/namespaces\/[^/]+\/pods$/.test(url.pathname)) {
      this.served.push(`404 ${url.pathname}`)
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end('{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}')
      return
    }
    const watch = ['1', 'true'].includes(url.searchParams.get('watch') ?? '')
    if (!watch) {
      this.served.push(`list ${wire}`)
      res.writeHead(200, { 'content-type': CONTENT_TYPE[wire].list, 'content-length': rec.list.length })
      res.end(rec.list)
      return
    }
    const streaming = url.searchParams.get('sendInitialEvents') === 'true'
    this.served.push(`${streaming ? 'streaming list' : 'watch'} ${wire}`)
    this.#open.add(res)
    res.on('close', () => this.#open.delete(res))
    res.writeHead(200, { 'content-type': CONTENT_TYPE[wire].watch })
    if (streaming) res.write(rec.initial)
    else res.flushHeaders()
    if (this.#served) return // a second watch in one session: held open, no events
    this.#served = true
    void this.#released.then(() => {
      if (!res.destroyed) res.write(rec.events)
    })
  }
}
