/**
 * @module build/tools/umoci — where `npm run build:image` gets its umoci binary.
 *
 * build/tools/build-umoci.sh decides, in this order: `EDGEOP_UMOCI` (a prebuilt umoci);
 * else the version-keyed cache (`$EDGEOP_BUILD_CACHE_DIR/bin/umoci-<version>/umoci`, default
 * ~/.cache/edgeop), which needs no Go; else a CGO_ENABLED=0 build of
 * github.com/opencontainers/umoci/cmd/umoci from the Go module proxy, pinned by
 * build/tools/umoci/go.mod (about 40 s cold on a 2-core machine). No system package.
 */
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The script that finds or builds umoci and prints its path on its last stdout line. */
export const BUILD_UMOCI = join(dirname(fileURLToPath(import.meta.url)), 'build-umoci.sh')

/**
 * The absolute path of an umoci binary, building it on first use. The build's progress and
 * any failure reason (no Go, a bad `EDGEOP_UMOCI`) go to our stderr; a failure throws an
 * error naming the script.
 */
export function umociPath(env: NodeJS.ProcessEnv = process.env): string {
  let stdout: string
  try {
    stdout = execFileSync('bash', [BUILD_UMOCI], {
      encoding: 'utf8',
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
  } catch (cause) {
    throw new Error(`umoci is unavailable: ${BUILD_UMOCI} failed (its reason is on stderr above)`, { cause })
  }
  const path = stdout.trim().split('\n').pop()
  if (path === undefined || !path.startsWith('/')) {
    throw new Error(`umoci is unavailable: ${BUILD_UMOCI} printed no absolute path`)
  }
  return path
}
