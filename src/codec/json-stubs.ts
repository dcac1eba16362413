/**
 * @module json-stubs — JSON list bodies and watch event lines split into {@link EncodedObject} stubs, without
 * parsing the objects (the client's `keepBytes` mode).
 *
 * Each object's bytes are found by walking the body ({@link scanObject}), copied out exactly sized with
 * `metadata.managedFields` already cut, and wrapped with the metadata read on the same walk. The small
 * parts around the objects (a list's `metadata`, an event's `type`, a bookmark or an `ERROR` Status)
 * are parsed as usual.
 */
import { isUtf8 } from 'node:buffer'
import { type EncodedObject, encodedObject } from '../core/encoded-object.ts'
import { EdgeopError } from '../core/errors.ts'
import type { KubeList, KubeObject, WatchEvent, WatchEventType } from '../core/types.ts'
import { jsonCodec, scanObject, spliceOut } from './json-codec.ts'
import { eachMember, keyIs, readString, readValue, scanError, skipSpace, skipValue } from './json-scan.ts'

const LBRACKET = 0x5b
const RBRACKET = 0x5d
const COMMA = 0x2c

/** The stub of the object spanning from `start` in `b` (its end found by the walk) and that end. */
function stubAt(b: Uint8Array, start: number, end: number): { stub: EncodedObject; end: number } {
  const s = scanObject(b, start, end)
  const bytes = spliceOut(b, start, s.end, s.cut)
  if (!isUtf8(bytes))
    throw new EdgeopError('EDGEOP_ERR_DECODE', `object at byte ${start} is not valid UTF-8`, {
      step: 'scan JSON',
    })
  return { stub: encodedObject(bytes, jsonCodec, undefined, s.meta), end: s.end }
}

/**
 * A JSON list body as a list whose items are stubs (metadata scanned, managedFields cut); the list's own
 * `kind`, `apiVersion` and `metadata` parsed. @throws EdgeopError `EDGEOP_ERR_DECODE`
 */
export function decodeListBytes<T extends KubeObject>(b: Uint8Array): KubeList<T> {
  const end = b.length
  const list: Record<string, unknown> = {}
  const items: EncodedObject[] = []
  const stop = eachMember(b, 0, end, (m) => {
    if (!keyIs(b, m.keyStart, m.keyEnd, 'items')) {
      const ve = skipValue(b, m.valueStart, end)
      list[readString(b, m.keyStart, m.keyEnd)] = readValue(b, m.valueStart, ve)
      return ve
    }
    let i = m.valueStart
    if (b[i] === 0x6e) return i + 4 // null
    if (b[i] !== LBRACKET) throw scanError('items is not an array', i)
    i = skipSpace(b, i + 1, end)
    if (b[i] === RBRACKET) return i + 1
    for (;;) {
      const { stub, end: e } = stubAt(b, i, end)
      items.push(stub)
      i = skipSpace(b, e, end)
      if (b[i] === RBRACKET) return i + 1
      if (b[i] !== COMMA) throw scanError(i >= end ? 'input ends inside items' : 'comma or ] expected', i)
      i = skipSpace(b, i + 1, end)
    }
  })
  if (skipSpace(b, stop, end) !== end) throw scanError('bytes after the list', stop)
  list.items = items
  return list as unknown as KubeList<T>
}

const OBJECT_EVENTS = new Set<string>(['ADDED', 'MODIFIED', 'DELETED'])
const TYPES = new Set<string>([...OBJECT_EVENTS, 'BOOKMARK', 'ERROR'])

/**
 * One watch event line: ADDED, MODIFIED and DELETED carry a stub of the `object` bytes; BOOKMARK and
 * ERROR objects are parsed (they are small and read whole). Undefined for a blank line; `undefined`
 * type or object means the line is not a watch event (the caller says so).
 * @throws EdgeopError `EDGEOP_ERR_DECODE` on malformed bytes
 */
export function decodeEventBytes<T extends KubeObject>(
  b: Uint8Array,
): WatchEvent<T> | { type?: undefined } | undefined {
  const end = b.length
  const start = skipSpace(b, 0, end)
  if (start === end) return undefined
  let type: string | undefined
  let span: { start: number; end: number } | undefined
  let stub: EncodedObject | undefined
  const stop = eachMember(b, start, end, (m) => {
    if (keyIs(b, m.keyStart, m.keyEnd, 'type')) {
      const ve = skipValue(b, m.valueStart, end)
      const t = b[m.valueStart] === 0x22 ? readString(b, m.valueStart, ve) : undefined
      type = t !== undefined && TYPES.has(t) ? t : undefined
      return ve
    }
    if (!keyIs(b, m.keyStart, m.keyEnd, 'object') || b[m.valueStart] !== 0x7b) return undefined
    // Stubbed at once (one walk); a BOOKMARK or ERROR found afterwards is parsed from the same span.
    const r = stubAt(b, m.valueStart, end)
    stub = r.stub
    span = { start: m.valueStart, end: r.end }
    return r.end
  })
  if (skipSpace(b, stop, end) !== end) throw scanError('bytes after the event', stop)
  if (type === undefined || !span || !stub) return {}
  const object = OBJECT_EVENTS.has(type) ? stub : readValue(b, span.start, span.end)
  return { type: type as WatchEventType, object: object as T }
}
