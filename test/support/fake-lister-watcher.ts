/**
 * @module fake-lister-watcher — a scripted ListerWatcher for unit tests of the watch
 * driver and informers. Integration tests use the real apiserver instead.
 */

import type { WatchStream } from '../../src/client/raw-watch.ts'
import { jsonCodec } from '../../src/codec/json-codec.ts'
import { encodedObject } from '../../src/core/encoded-object.ts'
import type { KubeList, KubeObject, WatchEvent } from '../../src/core/types.ts'
import type { ListRequest } from '../../src/watch/events.ts'
import type { ListerWatcher, WatchCall } from '../../src/watch/lister-watcher.ts'

/** A controllable stream: push events, end it, or fail it. */
export class FakeStream implements WatchStream<KubeObject> {
  #queue: (IteratorResult<WatchEvent<KubeObject>> | Error)[] = []
  #wake: (() => void) | undefined
  closed = false
  push(ev: WatchEvent<KubeObject> | Error | 'end'): void {
    this.#queue.push(
      ev === 'end' ? { done: true, value: undefined } : ev instanceof Error ? ev : { done: false, value: ev },
    )
    this.#wake?.()
  }
  close(): void {
    this.closed = true
    this.push('end')
  }
  events: AsyncIterable<WatchEvent<KubeObject>> = {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        while (this.#queue.length === 0) await new Promise<void>((r) => (this.#wake = r))
        const item = this.#queue.shift()!
        if (item instanceof Error) throw item
        return item
      },
    }),
  }
}

export type Call = { kind: 'list'; request: ListRequest } | { kind: 'watch'; call: WatchCall }

/** Answers list and watch calls from the scripts, in order; an exhausted script hangs. */
export function scripted(
  lists: (KubeList | Error)[],
  watches: (FakeStream | Error)[],
): ListerWatcher & { calls: Call[] } {
  const calls: Call[] = []
  return {
    describe: 'fake',
    calls,
    async list(request) {
      calls.push({ kind: 'list', request })
      const r = lists.shift()
      if (!r) return new Promise(() => {})
      if (r instanceof Error) throw r
      return r
    },
    async watch(call) {
      calls.push({ kind: 'watch', call })
      const r = watches.shift()
      if (!r) return new Promise(() => {})
      if (r instanceof Error) throw r
      return r
    },
  }
}
/** A list response. */
export const list = (rv: string, ...items: KubeObject[]): KubeList => ({
  metadata: { resourceVersion: rv },
  items,
})

/** `obj` as the client's `keepBytes` mode hands it over: a stub of its JSON bytes, managedFields cut. */
export function asStub(obj: KubeObject): KubeObject {
  return encodedObject(jsonCodec.stripManagedFields(new TextEncoder().encode(JSON.stringify(obj))), jsonCodec)
}

/** `lw` as a `keepBytes` client would answer: listed and watched objects as stubs (bookmarks and errors parsed). */
export function keepingBytes<L extends ListerWatcher>(lw: L): L {
  const stubEvent = (ev: WatchEvent<KubeObject>): WatchEvent<KubeObject> =>
    ev.type === 'BOOKMARK' || ev.type === 'ERROR' ? ev : { type: ev.type, object: asStub(ev.object) }
  return {
    ...lw,
    list: async (request, signal) => {
      const page = await lw.list(request, signal)
      return { ...page, items: page.items.map(asStub) }
    },
    watch: async (call, signal) => {
      const stream = await lw.watch(call, signal)
      return {
        close: () => stream.close(),
        events: (async function* () {
          for await (const ev of stream.events) yield stubEvent(ev)
        })(),
      }
    },
  }
}
