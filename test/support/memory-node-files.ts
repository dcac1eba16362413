/**
 * @module memory-node-files — a node's disk in memory, for NodeConfig agents under the simulator.
 *
 * The agent's `FileStore` does real file I/O, which the virtual clock cannot order; this store keeps
 * the same contract in a Map (a write is atomic: the old content or the new one; a file whose content
 * and mode match is not rewritten). The disk outlives the agent: each incarnation gets a
 * {@link MemoryNodeFiles.view} bound to its abort signal, which takes a little virtual time per
 * operation (so a crash lands between two of them) and refuses every operation once the
 * incarnation has crashed, as a killed process writes nothing more. Given {@link DiskFaults}, the
 * disk fails operations (EIO) and kills the agent right after a write (power lost between two file
 * operations: after the ownership record is claimed and before the file, after the file and before
 * the record), both drawn from the incarnation's seeded generator.
 */
import { type Clock, EdgeopError, sleep } from '../../src/core/index.ts'
import {
  type EnsureOutcome,
  emptyRecord,
  type NodeFiles,
  type OwnershipRecord,
} from '../../src/operators/nodeconfig/index.ts'
import type { Prng } from '../../src/testing/index.ts'

/** Longest virtual time one file operation takes (ms): long enough for a crash to fall inside a pass. */
export const MAX_FILE_OP_MS = 5

/** Chance that a file operation fails with EIO while disk faults are on: a few per pass over a fleet. */
export const DISK_ERROR_CHANCE = 0.01
/** Chance that the agent dies right after a write or removal while disk faults are on. */
export const DISK_CRASH_CHANCE = 0.02

/** Disk faults for one incarnation. */
export interface DiskFaults {
  /** True while faults may be drawn (they stop with the simulation's faults, before the settle time). */
  on(): boolean
  /** Kills the incarnation (its run rejects, the simulator restarts it). */
  crash(): void
  /** Counts a fault injected. */
  count(kind: 'disk-error' | 'crash-after-file-write'): void
}

/** One file on the node. */
export interface MemoryFile {
  content: string
  mode: number
}

/** A node's files (by path relative to the root) and the agent's ownership record (as written, JSON). */
export class MemoryNodeFiles {
  /** Managed files, by path. Read them; only the agent writes. */
  readonly files = new Map<string, MemoryFile>()
  /** The ownership record as last saved (JSON), or undefined. */
  record: string | undefined
  /** The paths the saved record owns. */
  recorded: ReadonlySet<string> = new Set()
  /** Writes and removals done, over every incarnation. */
  writes = 0

  /** The store one incarnation of the agent writes through: `signal` is the incarnation's. */
  view(signal: AbortSignal, clock: Clock, random: Prng, faults?: DiskFaults): NodeFiles {
    const step = async (): Promise<void> => {
      await sleep(random.int(MAX_FILE_OP_MS + 1), clock)
      if (signal.aborted)
        throw new EdgeopError('EDGEOP_ERR_FILE', 'the agent crashed: no file operation after it', {
          step: 'simulated disk',
        })
      if (faults?.on() && random.chance(DISK_ERROR_CHANCE)) {
        faults.count('disk-error')
        throw new EdgeopError('EDGEOP_ERR_FILE', 'simulated disk: input/output error (EIO)', {
          step: 'simulated disk',
        })
      }
    }
    /** After a write: the agent may die before its next operation. */
    const wrote = (): void => {
      this.writes++
      if (faults?.on() && random.chance(DISK_CRASH_CHANCE)) {
        faults.count('crash-after-file-write')
        faults.crash()
      }
    }
    return {
      open: async () => {
        await step()
        return '/sim'
      },
      ensure: async (path, content, mode): Promise<EnsureOutcome> => {
        await step()
        const existing = this.files.get(path)
        if (existing && existing.content === content && existing.mode === mode) return 'unchanged'
        this.files.set(path, { content, mode })
        wrote()
        return existing ? 'replaced' : 'created'
      },
      remove: async (path) => {
        await step()
        const removed = this.files.delete(path)
        wrote()
        return removed
      },
      loadRecord: async (): Promise<OwnershipRecord> => {
        await step()
        return this.record === undefined ? emptyRecord() : (JSON.parse(this.record) as OwnershipRecord)
      },
      saveRecord: async (record) => {
        await step()
        this.record = JSON.stringify(record)
        this.recorded = new Set(Object.keys(record.files))
        wrote()
      },
    }
  }
}
