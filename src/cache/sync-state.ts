/**
 * @module sync-state — how far an informer's store can be trusted: nothing yet, a restored snapshot, or the
 * server's state.
 */

/**
 * What an informer's store holds:
 * - `unsynced`: no full state yet;
 * - `restored`: a full state read from a cache snapshot, at the snapshot's resourceVersion. It may be
 *   minutes or days old: objects deleted or changed while the process was down are still in it as they
 *   were, until the resumed watch delivers the changes;
 * - `synced`: the server's state: a fresh list, or a resumed watch that has caught up with the
 *   server. Caught up means either: the watch has delivered every change up to the resourceVersion
 *   of a `limit=1` list the informer made after restoring (a consistent read: the server's current
 *   version, at the price of one object), or its first bookmark (the server has sent every change up
 *   to the bookmark's version, and a bookmark comes after the watch opened). An event alone proves
 *   nothing (it may be the first of a long backlog). The list is needed because kube-apiserver sends
 *   a bookmark only with a version newer than the watch's: a quiet collection may get none for as
 *   long as it stays quiet.
 *
 * A controller acts on `synced` unless it opts in to `restored` (`ControllerOptions.actOnRestored`).
 */
export type SyncState = 'unsynced' | 'restored' | 'synced'

/**
 * Whether the watch's resume point `current` has reached `target`, the resourceVersion a consistent
 * `limit=1` list returned. Only for decimal versions (etcd revisions, what kube-apiserver serves): the
 * API calls resourceVersions opaque, so any other form is never compared (false), and the informer
 * waits for a bookmark instead.
 */
export function resourceVersionReached(current: string, target: string): boolean {
  if (!/^\d+$/.test(current) || !/^\d+$/.test(target)) return false
  return BigInt(current) >= BigInt(target)
}
