/**
 * @module gen-protobuf — writes src/codec/protobuf/messages.generated.ts and src/codec/protobuf/kinds.generated.ts with
 * the Go generator in build/protobuf-schema/.
 *
 *     npm run gen:protobuf            # regenerate
 *     node build/gen-protobuf.ts --check   # exit 1 if a committed table differs from a fresh one
 *
 * Needs Go (the module pins k8s.io/api and k8s.io/apimachinery; the Go module proxy serves them).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..')

/** The two files of the table: the messages, and the kinds over them. */
export const TABLE_PARTS = ['messages', 'kinds'] as const
/** One of {@link TABLE_PARTS}. */
export type TablePart = (typeof TABLE_PARTS)[number]

/** Where `part` of the table is committed. */
export function tablePath(part: TablePart): string {
  return join(ROOT, `src/codec/protobuf/${part}.generated.ts`)
}

/** `part` of the table as the generator writes it now. */
export function generateTable(part: TablePart): string {
  return execFileSync('go', ['run', '.', part], {
    cwd: join(ROOT, 'build/protobuf-schema'),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
}

if (import.meta.main) {
  for (const part of TABLE_PARTS) {
    const fresh = generateTable(part)
    const file = tablePath(part)
    if (process.argv.includes('--check')) {
      if (readFileSync(file, 'utf8') !== fresh) {
        process.stderr.write(`src/codec/protobuf/${part}.generated.ts is stale: run npm run gen:protobuf\n`)
        process.exit(1)
      }
    } else {
      writeFileSync(file, fresh)
      process.stdout.write(`wrote ${file} (${fresh.length} bytes)\n`)
    }
  }
}
