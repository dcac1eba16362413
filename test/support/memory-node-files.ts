/**
 * @module memory-node-files — a node's disk in memory, for NodeConfig agents under the simulator.
 *
 * The agent's `FileStore` does real file I/O, which the virtual clock cannot order; this store keeps
 * the same contract in a Map (a write is atomic: the old content or the new one; a file whose content
 * and mode match is not rewritten). The disk outlives the agent: each incarnation gets a
 * {@link MemoryNodeFiles.view} bound to its abort signal, which takes a little virtual time per
 * operation (so a crash lands between two of them) and refuses every operation once the
 * incarnation has crashed, as a killed process writes nothing more.
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
  /** Writes and removals done, over every incarnation. */
  writes = 0

  /** The store one incarnation of the agent writes through: `signal` is the incarnation's. */
  view(signal: AbortSignal, clock: Clock, random: Prng): NodeFiles {
    const step = async (): Promise<void> => {
      await sleep(random.int(MAX_FILE_OP_MS + 1), clock)
      if (signal.aborted)
        throw new EdgeopError('EDGEOP_ERR_FILE', 'the agent crashed: no file operation after it', {
          step: 'simulated disk',
        })
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
        this.writes++
        return existing ? 'replaced' : 'created'
      },
      remove: async (path) => {
        await step()
        this.writes++
        return this.files.delete(path)
      },
      loadRecord: async (): Promise<OwnershipRecord> => {
        await step()
        return this.record === undefined ? emptyRecord() : (JSON.parse(this.record) as OwnershipRecord)
      },
      saveRecord: async (record) => {
        await step()
        this.record = JSON.stringify(record)
        this.writes++
      },
    }
  }
}
