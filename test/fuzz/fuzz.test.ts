/**
 * The bounded fuzz run of `npm test`: for every target, each committed seed is a test of its own (a seed
 * named `dN-…` is the regression test of defect DN of the hostile-input review, see docs/fuzzing.md), then a fixed number of mutated inputs
 * from a fixed fast-check seed, so the run is the same on every machine and a failure replays (and
 * shrinks) exactly. The long, coverage-guided run is `npm run fuzz` (docs/fuzzing.md).
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { AWAITING_FIXES, AWAITING_SIGNATURES } from './awaiting-fixes.ts'
import {
  applyMutation,
  dictionaryBytes,
  Finding,
  type FuzzSession,
  mutation,
  preview,
  readCorpus,
} from './harness.ts'
import { TARGETS } from './targets.ts'

/** Mutated inputs per target: under a second each on a 2-core machine, up to 5 s for the TLS servers' targets. */
export const BOUNDED_RUNS = 300
/** The fast-check seed of the bounded run; change it only with a reason (the corpus and the figures in docs/fuzzing.md were made with it). */
export const BOUNDED_SEED = 28

/** `d8-null-object.snapshot` → `D8: … null object`; other seeds by their file name. */
function seedTestName(target: string, file: string): string {
  const m = /^d(\d+)-(.*)\.[a-z]+$/.exec(file)
  return m
    ? `D${m[1]}: ${target} answers the seed ${m[2]!.replaceAll('-', ' ')} as documented (corpus ${file})`
    : `${target}: the seed ${file} is answered as documented`
}

test('every seed awaiting a fix is in its corpus, so the list cannot hide a renamed seed', () => {
  for (const id of Object.keys(AWAITING_FIXES)) {
    const [target, file] = id.split('/') as [string, string]
    assert.ok(
      readCorpus(target).some((s) => s.file === file),
      `${id} is not in test/fuzz/corpus/`,
    )
  }
})

for (const target of TARGETS) {
  describe(`fuzz target ${target.name} (${target.entry})`, () => {
    const seeds = readCorpus(target.name).filter((s) => !(`${target.name}/${s.file}` in AWAITING_FIXES))
    let session: FuzzSession
    before(async () => {
      session = await target.open()
    })
    after(() => session.close())

    for (const seed of seeds) test(seedTestName(target.name, seed.file), () => session.run(seed.bytes))

    test(`${target.name}: ${BOUNDED_RUNS} mutated inputs from seed ${BOUNDED_SEED} are answered as documented`, async (t) => {
      const pool = seeds.map((s) => s.bytes)
      const dictionary = dictionaryBytes(target)
      const awaiting = AWAITING_SIGNATURES[target.name]
      let known = 0
      await fc.assert(
        fc.asyncProperty(mutation, async (m) => {
          const input = applyMutation(m, pool, dictionary, target.maxBytes)
          try {
            await session.run(input)
          } catch (err) {
            if (awaiting && err instanceof Finding && awaiting[1].test(err.message)) return void known++
            throw Object.assign(new Error(`input ${preview(input)}: ${(err as Error).message}`), {
              cause: err,
            })
          }
        }),
        { seed: BOUNDED_SEED, numRuns: BOUNDED_RUNS },
      )
      if (known > 0) t.diagnostic(`${known} inputs hit ${awaiting![0]}, awaiting its fix`)
    })
  })
}
