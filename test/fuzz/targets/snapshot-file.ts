/**
 * @module snapshot-file — fuzz target: informer cache snapshot files, restored by a real `SharedInformer`
 * at start (eager and compact stores) from a scripted ListerWatcher on a ManualClock.
 *
 * Each input is tried twice: as the file's bytes, and with its trailer replaced by a valid checksum of
 * its body, so mutations reach the decoder and the store instead of stopping at `checksum mismatch`.
 * Answered: the informer syncs (from the snapshot, or cold after one warning). A `run()` that rejects is
 * the agent crashing at start.
 */
import { createHash } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { SharedInformer } from '../../../src/cache/informer.ts'
import type { SnapshotIdentity } from '../../../src/cache/snapshot-format.ts'
import { ManualClock } from '../../../src/core/clock.ts'
import { noopLogger } from '../../../src/core/log.ts'
import { list, scripted } from '../../support/fake-lister-watcher.ts'
import { describeError, Finding, type FuzzSession, type FuzzTarget, scratchBase } from '../harness.ts'
import { JSON_DICTIONARY } from './json-scan.ts'

/** The identity the seeds were written for (`encodeSnapshot`), so they restore. */
export const SNAPSHOT_IDENTITY: SnapshotIdentity = {
  resource: '/v1/configmaps',
  namespace: 'ns',
  labelSelector: '',
  fieldSelector: '',
  metadataOnly: false,
  tag: 't',
}

/** A restore reads one small file: far more than it takes, so only a hang reaches it. */
const SYNC_TIMEOUT_MS = 5_000

const TRAILER = /\nsha256:[0-9a-f]{64}\n$/

/** `bytes` with a valid trailer: the body (without any old trailer) and `sha256:<hex of body>`. */
export function withValidTrailer(bytes: Uint8Array): Buffer {
  const text = Buffer.from(bytes).toString('latin1')
  const m = TRAILER.exec(text)
  const body = Buffer.from(bytes).subarray(0, m ? m.index + 1 : bytes.length)
  const end = body.length && body[body.length - 1] !== 0x0a ? Buffer.from('\n') : Buffer.alloc(0)
  const full = Buffer.concat([body, end])
  return Buffer.concat([full, Buffer.from(`sha256:${createHash('sha256').update(full).digest('hex')}\n`)])
}

export const snapshotFile: FuzzTarget = {
  name: 'snapshot-file',
  entry:
    'SharedInformer.run restoring a snapshot file (eager and compact stores), as is and with a valid checksum',
  dictionary: [
    ...JSON_DICTIONARY,
    '{"format":1,',
    '"count":',
    '"tag":"t"',
    '"resource":"/v1/configmaps"',
    'sha256:',
    '\n',
  ],
  maxBytes: 64 * 1024,
  async open(): Promise<FuzzSession> {
    const dir = await mkdtemp(join(scratchBase(), 'edgeop-fuzz-snapshot-'))
    const path = join(dir, 'configmaps.snapshot')
    return {
      async run(input) {
        for (const bytes of [input, withValidTrailer(input)]) {
          await writeFile(path, bytes)
          for (const store of ['eager', 'compact'] as const) {
            const informer = new SharedInformer(scripted([list('1')], []), {
              clock: new ManualClock(),
              logger: noopLogger,
              snapshot: { path, identity: SNAPSHOT_IDENTITY },
              store,
              streaming: 'off',
            })
            const ac = new AbortController()
            const running = informer.run(ac.signal)
            const failed = running.then(
              () => new Finding('run() ended before the informer synced'),
              (err: unknown) =>
                new Finding(`run() rejected (the agent would crash at start): ${describeError(err)}`, err),
            )
            let timer: NodeJS.Timeout | undefined
            const stuck = new Promise<Finding>((resolve) => {
              timer = setTimeout(
                () => resolve(new Finding('the informer neither synced nor failed')),
                SYNC_TIMEOUT_MS,
              )
            })
            const outcome = await Promise.race([informer.whenSynced().then(() => undefined), failed, stuck])
            clearTimeout(timer)
            ac.abort()
            await running.catch(() => {})
            if (outcome) throw outcome
          }
        }
      },
      close: () => rm(dir, { recursive: true, force: true }),
    }
  },
}
