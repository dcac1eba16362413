/**
 * @module variants — the rows of the benchmark: each peer with its wire format, and edgeop with its
 * wire format, store and Node flags (every row names them). edgeop's protobuf and compact
 * rows run only when the build honours those options (lib/capabilities.ts finds out).
 */
import { NODE_FLAGS } from '../../../build/node-flags.ts'
import type { Capabilities } from './capabilities.ts'
import type { Peer, PeerId } from './peers.ts'
import { WIRE_LABEL, type Wire } from './wire.ts'

export type StoreKind = 'eager' | 'compact'

/** One way of running edgeop. */
export interface EdgeopVariant {
  wire: Wire
  /** Unset for work without an informer (a list). */
  store?: StoreKind
  /** Node flags before the script. */
  flags: readonly string[]
  /** replay only: what the update handler declares it reads (unset: both objects). */
  handlerReads?: 'new' | 'metadata'
}

/** How a row names {@link EdgeopVariant.handlerReads}. */
const HANDLER_LABEL = { new: 'handler reads the new object', metadata: 'handler reads metadata' } as const

/** The flags edgeop's images and single executable run with (build/node-flags.ts). */
export const IMAGE_FLAGS: readonly string[] = NODE_FLAGS

/** `edgeop (protobuf, compact, --optimize-for-size)`. */
export function edgeopRow(v: EdgeopVariant): string {
  const handler = v.handlerReads ? [HANDLER_LABEL[v.handlerReads]] : []
  return `edgeop (${[WIRE_LABEL[v.wire], ...(v.store ? [v.store] : []), ...v.flags, ...handler].join(', ')})`
}

/** `client-go (protobuf)`. */
export function peerRow(peer: PeerId, wire: Wire): string {
  return `${peer} (${WIRE_LABEL[wire]})`
}

/** The informer variants the build supports, at the given flags: JSON/eager always. */
export function informerVariants(caps: Capabilities, flags: readonly string[] = []): EdgeopVariant[] {
  const wires: Wire[] = caps.informerProtobuf ? ['json', 'protobuf'] : ['json']
  const stores: StoreKind[] = caps.compact ? ['eager', 'compact'] : ['eager']
  return wires.flatMap((wire) => stores.map((store) => ({ wire, store, flags })))
}

/**
 * The edgeop row ratios are taken against: protobuf with the compact store when the build has both
 * (what the protobuf and compact-store targets are about), otherwise what it has; default flags.
 */
export function baseVariant(caps: Capabilities): EdgeopVariant {
  return {
    wire: caps.informerProtobuf ? 'protobuf' : 'json',
    store: caps.compact ? 'compact' : 'eager',
    flags: [],
  }
}

/** The job fields of a variant (always explicit, so a later change of edgeop's defaults keeps the row honest). */
export function variantJob(v: EdgeopVariant): object {
  return {
    wire: v.wire,
    ...(v.store ? { store: v.store } : {}),
    ...(v.flags.length ? { nodeFlags: v.flags } : {}),
    ...(v.handlerReads ? { handlerReads: v.handlerReads } : {}),
  }
}

/** One row to run: the peer, its row label and the job fields that make it. */
export interface Run {
  peer: Peer
  row: string
  job: object
}

/**
 * The replay workload's extra rows: the compact store with a handler that declares what it reads
 * (the new object only, as client-go decodes each event once; metadata only, as a controller's
 * handler enqueueing keys), since the compact store decodes only what a handler reads.
 */
export function handlerRuns(peers: readonly Peer[], caps: Capabilities): Run[] {
  const edgeop = peers.find((p) => p.id === 'edgeop')
  if (!edgeop || !caps.compact) return []
  return (['new', 'metadata'] as const).map((handlerReads) => {
    const v: EdgeopVariant = { ...baseVariant(caps), handlerReads }
    return { peer: edgeop, row: edgeopRow(v), job: variantJob(v) }
  })
}

/** The rows of a peer other than edgeop: client-go in JSON and protobuf (its default), the others in JSON. */
export function peerRuns(peer: Peer): Run[] {
  if (peer.id === 'client-go')
    return (['json', 'protobuf'] as const).map((wire) => ({
      peer,
      row: peerRow(peer.id, wire),
      job: { wire },
    }))
  return [{ peer, row: peerRow(peer.id, 'json'), job: {} }]
}

/**
 * The rows of an informer workload: edgeop's supported variants (at default flags, and at the image
 * flags too when `imageFlags`), client-go in JSON and protobuf (its default), the others in JSON.
 */
export function informerRuns(peers: readonly Peer[], caps: Capabilities, imageFlags: boolean): Run[] {
  return peers.flatMap((peer): Run[] => {
    if (peer.id === 'edgeop') {
      const vs = [...informerVariants(caps), ...(imageFlags ? informerVariants(caps, IMAGE_FLAGS) : [])]
      return vs.map((v) => ({ peer, row: edgeopRow(v), job: variantJob(v) }))
    }
    return peerRuns(peer)
  })
}
