/**
 * @module build/tools/debian — Debian packages, downloaded and extracted into the build cache.
 *
 * build/tools/fetch-debs.sh runs `apt-get update` / `apt-get download` with a private apt
 * state, cache and sources list (the suite pinned in versions.env, architectures amd64 and
 * arm64) and extracts the .debs with `dpkg-deb -x` under
 * `$EDGEOP_BUILD_CACHE_DIR/debian-<suite>/<name>`. No root, no `dpkg --add-architecture`, no
 * system apt list is read or written; a second call with the same packages is a cache hit.
 */
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The script that downloads and extracts the packages and prints the root on its last stdout line. */
export const FETCH_DEBS = join(dirname(fileURLToPath(import.meta.url)), 'fetch-debs.sh')

/** What to fetch: a cache name, `package:arch` names, and optionally the only paths to keep. */
export interface DebRequest {
  /** The directory name under the cache (`[a-z0-9-]+`). */
  name: string
  packages: readonly string[]
  /** Paths inside the packages to keep (everything else is dropped); default: all. */
  keep?: readonly string[]
}

/**
 * The absolute directory the packages are extracted into, fetching them on first use.
 * Progress and any failure reason go to our stderr; a failure throws an error naming the
 * script and the packages.
 */
export function fetchDebs(request: DebRequest, env: NodeJS.ProcessEnv = process.env): string {
  const args = [...(request.keep ?? []).flatMap((k) => ['--keep', k]), request.name, ...request.packages]
  let stdout: string
  try {
    stdout = execFileSync('bash', [FETCH_DEBS, ...args], {
      encoding: 'utf8',
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
  } catch (cause) {
    throw new Error(
      `Debian packages ${request.packages.join(' ')} are unavailable: ${FETCH_DEBS} failed (its reason is on stderr above)`,
      { cause },
    )
  }
  const root = stdout.trim().split('\n').pop()
  if (root === undefined || !root.startsWith('/')) {
    throw new Error(`${FETCH_DEBS} printed no absolute path for ${request.name}`)
  }
  return root
}
