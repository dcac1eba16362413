/**
 * @module corpus — the recorded protobuf corpus (test/protobuf/corpus/, from record-corpus.ts) for the unit tests.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { KindSchema } from '../../../src/codec/protobuf/kind-schema.ts'
import * as KINDS from '../../../src/codec/protobuf/kinds.generated.ts'
import { CORPUS_KINDS, type CorpusKind } from './corpus-objects.ts'

const DIR = join(import.meta.dirname, 'corpus')

/** The bytes of one corpus file. */
export function corpusFile(name: string): Buffer {
  return readFileSync(join(DIR, name))
}

/** The JSON of one corpus file, parsed. */
export function corpusJson(name: string): unknown {
  return JSON.parse(readFileSync(join(DIR, name), 'utf8'))
}

/** The table's schema of a corpus kind. */
export function schemaOf(k: CorpusKind): KindSchema {
  const schema = (KINDS as Record<string, unknown>)[k.schema]
  if (schema === undefined) throw new Error(`no ${k.schema} in kinds.generated.ts`)
  return schema as KindSchema
}

export { CORPUS_KINDS }
