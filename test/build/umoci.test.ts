/**
 * Where umoci comes from (build/tools/umoci.ts + build-umoci.sh): the version in
 * versions.env is the one go.mod pins, `EDGEOP_UMOCI` is used as given or refused with a
 * reason, and without Go or a cached binary the failure is loud.
 */
import assert from 'node:assert/strict'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { BUILD_UMOCI, umociPath } from '../../build/tools/umoci.ts'
import { noGo, scratchDirs } from '../support/scratch.ts'

const TOOLS = dirname(BUILD_UMOCI)
const tempDir = scratchDirs('edgeop-umoci-')

test('versions.env names the umoci version go.mod pins (the cache key matches the build)', async () => {
  const env = await readFile(join(TOOLS, 'versions.env'), 'utf8')
  const version = /^UMOCI_VERSION=(\S+)$/m.exec(env)?.[1]
  const gomod = await readFile(join(TOOLS, 'umoci/go.mod'), 'utf8')
  assert.ok(version, 'versions.env has UMOCI_VERSION')
  assert.match(
    gomod,
    new RegExp(`^\\s*github\\.com/opencontainers/umoci v${version.replaceAll('.', '\\.')}\\b`, 'm'),
  )
  assert.match(gomod, /^tool github\.com\/opencontainers\/umoci\/cmd\/umoci$/m)
})

test('EDGEOP_UMOCI: an executable is used as is, without Go', async () => {
  const fake = join(await tempDir(), 'umoci')
  await writeFile(fake, '#!/bin/sh\n')
  await chmod(fake, 0o755)
  assert.equal(umociPath(noGo({ EDGEOP_UMOCI: fake })), fake)
})

test('EDGEOP_UMOCI: a relative path or a non-executable file is refused', async () => {
  const plain = join(await tempDir(), 'umoci')
  await writeFile(plain, '')
  for (const bad of ['umoci', plain]) {
    assert.throws(
      () => umociPath(noGo({ EDGEOP_UMOCI: bad })),
      /umoci is unavailable: .*build-umoci\.sh failed/,
    )
  }
})

test('a cached binary is used without Go', async () => {
  const cache = await tempDir()
  const version = /^UMOCI_VERSION=(\S+)$/m.exec(await readFile(join(TOOLS, 'versions.env'), 'utf8'))![1]!
  const dir = join(cache, 'bin', `umoci-${version}`)
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'umoci'), '#!/bin/sh\n')
  await chmod(join(dir, 'umoci'), 0o755)
  assert.equal(umociPath(noGo({ EDGEOP_BUILD_CACHE_DIR: cache })), join(dir, 'umoci'))
})

test('no cached binary and no Go: a loud failure, not a silent skip', async () => {
  const cache = await tempDir()
  assert.throws(() => umociPath(noGo({ EDGEOP_BUILD_CACHE_DIR: cache })), /umoci is unavailable/)
})
