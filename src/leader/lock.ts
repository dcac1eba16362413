/**
 * @module lock — the narrow interface the elector needs from whatever stores the record.
 *
 * client-go's `resourcelock.Interface` minus events and the raw-bytes return: edgeop ships one
 * implementation, {@link LeaseLock} (`lease-lock.ts`); tests use an in-memory fake.
 */
import type { LeaderElectionRecord } from './record.ts'

/**
 * A compare-and-swap cell holding one {@link LeaderElectionRecord}.
 *
 * Contract an implementation must keep:
 * - `get` reads the current record (undefined when the object does not exist) and remembers the
 *   version it read;
 * - `update` writes only if the stored object is still the version last read or written by this
 *   lock, and otherwise fails with a 409 Conflict (`isConflict(err)`); on **any** failure the
 *   remembered version is kept (kubernetes/kubernetes#95939), so a later `update` or release still works;
 * - `update` before any successful `get`/`create` fails with `EDGEOP_ERR_LEADER` ("not initialized");
 * - `create` fails with 409 AlreadyExists when the object exists;
 * - every call honours `signal` (rejects promptly when it aborts).
 *
 * @example
 * const lock: ResourceLock = LeaseLock.fromClient(client, { namespace: 'ops', name: 'my-operator', identity })
 */
export interface ResourceLock {
  /** This candidate's identity; must be non-empty and unique among candidates. */
  readonly identity: string
  /** A human-readable name of the stored object, e.g. `ops/my-operator`. */
  describe(): string
  /** Reads the record; undefined when the object does not exist. */
  get(signal?: AbortSignal): Promise<LeaderElectionRecord | undefined>
  /** Creates the object holding `record`. */
  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>
  /** Replaces the record, guarded by the version last read or written. */
  update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>
}
