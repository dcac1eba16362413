/**
 * @module assets — the project harness's binaries: `edgeop/testing`'s resolution (src/testing/assets.ts),
 * asking for every binary by default, since the harness also runs the controllers and kwok.
 */
import {
  BINARY_NAMES,
  type Binaries,
  type ResolveOptions,
  resolveBinaries as resolve,
} from '../../src/testing/assets.ts'

export {
  AssetsUnavailableError,
  BINARY_NAMES,
  type Binaries,
  type BinaryName,
  cachedBinaryDir,
  cacheRoot,
  readVersions,
  type Versions,
} from '../../src/testing/assets.ts'

/** {@link resolve} with `need` defaulting to all of {@link BINARY_NAMES}. */
export function resolveBinaries(options: ResolveOptions = {}): Promise<Binaries> {
  return resolve({ need: BINARY_NAMES, ...options })
}
