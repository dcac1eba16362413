/**
 * The committed API report (api/*.api.md) is the public surface of every subpath. This test
 * regenerates it from the sources and fails on any difference, so a new, removed or changed
 * public name lands only as a reviewed diff of api/ (`npm run api:report` rewrites it), and
 * fails on any public declaration or member without a TSDoc comment.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { before, test } from 'node:test'
import { type ApiReport, generateApiReport, reportPath } from '../../build/api-report.ts'

let report: ApiReport
before(async () => {
  report = await generateApiReport()
})

test('api/ matches the public surface of every subpath (run `npm run api:report` and review the diff)', async () => {
  assert.ok(report.files.size >= 10, 'one report per subpath of package.json exports')
  for (const [subpath, text] of report.files) {
    const committed = await readFile(reportPath(subpath), 'utf8').catch(() => '(missing)')
    assert.equal(committed, text, `api report of ${subpath} differs`)
  }
})

test('engine internals and generic names stay out of the package root', () => {
  const root = new Set(report.entries.get('.')!.map((e) => e.name))
  for (const name of [
    'step',
    'initialState',
    'classify',
    'MinHeap',
    'RingBuffer',
    'Request',
    'Step',
    'Input',
    'Command',
    'Phase',
  ])
    assert.ok(!root.has(name), `${name} is public`)
})

test('internal tuning constants and limits are on no subpath (options carry the defaults users set)', () => {
  const internal = [
    'MAX_AUTHORIZATION_HEADER',
    'METRICS_AUTH_ALLOWED_TTL_MS',
    'METRICS_AUTH_CACHE_SIZE',
    'METRICS_AUTH_DENIED_TTL_MS',
    'METRICS_AUTH_MAX_IN_FLIGHT',
    'OPS_REQUEST_TIMEOUT_MS',
    'SELF_SIGNED_BACKDATE_MS',
    'WEBHOOK_CA_PROPAGATION_MS',
    'WEBHOOK_CERT_RETRY_MS',
    'WEBHOOK_REQUEST_TIMEOUT_MS',
    'MAX_REVIEW_BYTES',
    'DECODED_CACHE_SIZE',
    'SNAPSHOT_LOCK_FILE',
    'SNAPSHOT_FORMAT',
    'MAX_PARKED_MESSAGE_CHARS',
    'MAX_QUOTED_INPUT_CHARS',
    'MAX_QUOTED_INPUTS',
    'MAX_PEM_FILE_BYTES',
    'MAX_TOKEN_FILE_BYTES',
    'MAX_YAML_ALIAS_NODES',
    'MAX_YAML_ALIASES',
    'MAX_YAML_DEPTH',
    'TOKEN_FILE_LEEWAY_MS',
    'TOKEN_FILE_PERIOD_MS',
    'YAML_DEFAULT_SOURCE_NAME',
    'MAX_REMEMBERED_EVENTS',
    'FINALIZER_PATCH_ATTEMPTS',
    'VERY_SHORT_WATCH_MS',
    'CLUSTERS_FILE_POLL_MS',
  ]
  const exposed = [...report.entries].flatMap(([subpath, list]) =>
    list.filter((e) => internal.includes(e.name)).map((e) => `${subpath}: ${e.name}`),
  )
  assert.deepEqual(exposed, [])
})

test('every public declaration and member carries a TSDoc comment', () => {
  const missing = [...report.entries]
    .filter(([subpath]) => subpath !== '.')
    .flatMap(([subpath, list]) => list.flatMap((e) => e.undocumented.map((u) => `${subpath}: ${u}`)))
  assert.deepEqual(missing, [])
})
