import assert from 'node:assert/strict'
import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, normalize, resolve, sep } from 'node:path'
import { after, test } from 'node:test'
import { EdgeopError } from '../../../src/core/errors.ts'
import { PATH_PATTERN } from '../../../src/operators/nodeconfig/api.ts'
import { checkRelativePath, containedTarget, isPathRefused } from '../../../src/operators/nodeconfig/paths.ts'
import { seededRandom } from '../../support/random.ts'

/** Ordinary segment names, including unicode and names that only look dangerous. */
const NAMES = [
  'a',
  'etc',
  'conf.d',
  '...',
  '..a',
  '.hidden',
  'é',
  '配置',
  '🙂',
  'C:',
  ' ',
  '%2e%2e',
  '~',
  'x'.repeat(254),
]
/** Segments and separators that must be refused. */
const DANGEROUS = [
  '..',
  '.',
  '',
  '\\',
  '\\..\\',
  '\u0000',
  '\n',
  '\u007f',
  '.edgeop',
  '.edgeop-tmp-1',
  'y'.repeat(256),
]
const SEPARATORS = ['/', '/', '/', '/', '/', '/', '//', '\\', '/./', '/../']

function randomPath(rand: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!
  const n = 1 + Math.floor(rand() * 8)
  let p = rand() < 0.08 ? '/' : ''
  for (let i = 0; i < n; i++) {
    if (i > 0) p += pick(SEPARATORS)
    p += rand() < 0.93 ? pick(NAMES) : pick(DANGEROUS)
  }
  if (rand() < 0.03) p += '/'
  if (rand() < 0.03) p = `${p}/`.repeat(40) + 'z' // very long
  return p
}

const SEED = 20261129
const RUNS = 20_000
const ROOTS = ['/var/lib/edgeop/files', '/r', `${tmpdir()}${sep}edgeop root`]

test(`property: accepted ⇒ resolved inside the root, already normalised, and the CRD pattern agrees (${RUNS} paths, seed ${SEED})`, () => {
  const rand = seededRandom(SEED)
  let accepted = 0
  for (let i = 0; i < RUNS; i++) {
    const p = randomPath(rand)
    const verdict = checkRelativePath(p)
    const patternSays = PATH_PATTERN.test(p)
    if (!verdict.ok) {
      assert.ok(verdict.reason.length > 0)
      continue
    }
    accepted++
    assert.equal(verdict.path, p, 'accepted paths are not rewritten')
    assert.equal(normalize(p), p, `normalised: ${JSON.stringify(p)}`)
    assert.ok(patternSays, `the CRD pattern accepts what the agent accepts: ${JSON.stringify(p)}`)
    assert.ok(!p.split('/').includes('..'), JSON.stringify(p))
    for (const root of ROOTS) {
      const abs = resolve(root, p)
      assert.ok(
        abs.startsWith(root + sep) && abs.length > root.length + 1,
        `${JSON.stringify(p)} escapes ${root}`,
      )
      assert.equal(join(root, p), abs)
    }
  }
  // Enough of both kinds that the property means something.
  assert.ok(accepted > RUNS * 0.05, `accepted ${accepted}`)
  assert.ok(accepted < RUNS * 0.9, `accepted ${accepted}`)
})

test('table: what is refused, and why', () => {
  const cases: [string, RegExp | 'ok'][] = [
    ['etc/chrony.conf', 'ok'],
    ['配置/设置.conf', 'ok'],
    ['.bashrc', 'ok'],
    ['...', 'ok'],
    ['a/..b/c', 'ok'],
    ['', /empty/],
    ['/etc/passwd', /absolute/],
    ['../etc/passwd', /"\.\."/],
    ['a/../../b', /"\.\."/],
    ['a/./b', /"\."/],
    ['./a', /"\."/],
    ['a//b', /empty segments/],
    ['a/', /empty segments/],
    ['a\\..\\..\\b', /backslash/],
    ['a\u0000b', /control/],
    ['a\nb', /control/],
    ['.edgeop/owners.json', /reserved/],
    ['x/.edgeop-tmp-1234', /reserved/],
    [`${'x'.repeat(256)}`, /segment is longer than 255/],
    [`${'abc/'.repeat(300)}z`, /longer than 1024 bytes/],
    [`${'é'.repeat(513)}`, /longer than 1024 bytes/], // 1026 bytes, 513 characters
  ]
  for (const [path, want] of cases) {
    const v = checkRelativePath(path)
    if (want === 'ok') assert.deepEqual(v, { ok: true, path }, path)
    else {
      assert.equal(v.ok, false, JSON.stringify(path))
      assert.match((v as { reason: string }).reason, want, JSON.stringify(path))
    }
  }
})

const dirs: string[] = []
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

test('containedTarget: refuses a parent that is a symlink leading out of the root, accepts one that stays in', async () => {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'edgeop-paths-')))
  dirs.push(base)
  const root = join(base, 'root')
  const outside = join(base, 'outside')
  await mkdir(join(root, 'inner'), { recursive: true })
  await mkdir(outside)
  await symlink(outside, join(root, 'escape'))
  await symlink(join(root, 'inner'), join(root, 'alias'))
  await assert.rejects(containedTarget(root, 'escape/x.conf'), {
    code: 'EDGEOP_ERR_FILE',
    message: /outside the root/,
  })
  await assert.rejects(containedTarget(root, 'escape/deeper/not/yet/x'), /outside the root/)
  assert.equal(await containedTarget(root, 'alias/x.conf'), join(root, 'alias/x.conf'))
  assert.equal(await containedTarget(root, 'new/dir/x.conf'), join(root, 'new/dir/x.conf'))
  await assert.rejects(containedTarget(root, '../outside/x'), { code: 'EDGEOP_ERR_FILE' })
})

test('a refused path is recognisable by isPathRefused; other file errors are not', async () => {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'edgeop-refused-')))
  try {
    const refused = await containedTarget(root, '../x').catch((err: unknown) => err)
    assert.equal(isPathRefused(refused), true)
    assert.equal((refused as EdgeopError).code, 'EDGEOP_ERR_FILE')
    assert.equal(
      isPathRefused(new EdgeopError('EDGEOP_ERR_FILE', 'disk full', { step: 'check path' })),
      false,
    )
    assert.equal(isPathRefused(new Error('../x')), false)
  } finally {
    await rm(root, { recursive: true, force: true })
  }
})
