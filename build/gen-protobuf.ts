/**
 * @module gen-protobuf — writes src/codec/protobuf/kinds.generated.ts with the Go generator in build/protobuf-schema/.
 *
 *     npm run gen:protobuf            # regenerate
 *     node build/gen-protobuf.ts --check   # exit 1 if the committed table differs from a fresh one
 *
 * Needs Go (the module pins k8s.io/api and k8s.io/apimachinery; the Go module proxy serves them).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..')
const TABLE = join(ROOT, 'src/codec/protobuf/kinds.generated.ts')

/** The table as the generator writes it now. */
export function generateTable(): string {
  return execFileSync('go', ['run', '.'], {
    cwd: join(ROOT, 'build/protobuf-schema'),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
}

if (import.meta.main) {
  const fresh = generateTable()
  if (process.argv.includes('--check')) {
    if (readFileSync(TABLE, 'utf8') !== fresh) {
      process.stderr.write('src/codec/protobuf/kinds.generated.ts is stale: run npm run gen:protobuf\n')
      process.exit(1)
    }
  } else {
    writeFileSync(TABLE, fresh)
    process.stdout.write(`wrote ${TABLE} (${fresh.length} bytes)\n`)
  }
}
