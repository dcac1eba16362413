/**
 * The committed API reference (docs/api/*.md) is rendered from the TSDoc of the sources. This test
 * renders it again and fails on any difference, so a changed doc comment or public name lands
 * together with its page (`npm run docs:api` rewrites them). It also checks the TSDoc rendering on
 * small inputs, and that every link between pages points at a heading that exists.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { before, test } from 'node:test'
import { docsPath, renderApiDocs, renderDoc } from '../../build/api-docs.ts'
import { generateApiReport } from '../../build/api-report.ts'

let pages: Map<string, string>
before(async () => {
  pages = await renderApiDocs(await generateApiReport())
})

test('docs/api matches the TSDoc of the sources (run `npm run docs:api` and commit the result)', async () => {
  assert.ok(pages.size >= 11, 'one page per subpath of package.json exports, and an index')
  for (const [subpath, text] of pages) {
    const committed = await readFile(docsPath(subpath), 'utf8').catch(() => '(missing)')
    assert.equal(committed, text, `docs/api page of ${subpath} differs`)
  }
})

test('every link between API pages lands on a heading of the page it names', () => {
  const headings = new Map<string, Set<string>>()
  for (const [subpath, text] of pages) {
    const page = docsPath(subpath).replace(/^.*\//, '')
    const seen = new Map<string, number>()
    const anchors = new Set<string>()
    for (const m of text.matchAll(/^## (.+)$/gm)) {
      const base = m[1]!.toLowerCase().replace(/[^\w-]/g, '')
      const n = seen.get(base) ?? 0
      seen.set(base, n + 1)
      anchors.add(n === 0 ? base : `${base}-${n}`)
    }
    headings.set(page, anchors)
  }
  let links = 0
  for (const [subpath, text] of pages) {
    const page = docsPath(subpath).replace(/^.*\//, '')
    for (const m of text.matchAll(/\]\(([\w-]+\.md)?#([\w-]+)\)/g)) {
      const target = m[1] ?? page
      assert.ok(headings.get(target)?.has(m[2]!), `${page} links to ${target}#${m[2]}, which does not exist`)
      links++
    }
  }
  assert.ok(links > 100, `links checked: ${links}`)
})

test('TSDoc rendering: links resolve, @example is fenced, block tags are labelled', () => {
  const link = (t: string): string => (t.startsWith('Known') ? `[\`${t}\`](#known)` : `\`${t}\``)
  const doc = [
    'Reads {@link Known.member}, not {@link Other | other}.',
    '@throws EdgeopError `EDGEOP_ERR_CONFIG`',
    '@example',
    'const x = f() // {@link Known} stays code here',
  ].join('\n')
  assert.equal(
    renderDoc(doc, link),
    [
      'Reads [`Known.member`](#known), not `Other`.',
      '',
      '**Throws** EdgeopError `EDGEOP_ERR_CONFIG`',
      '',
      'Example:',
      '',
      '```ts',
      'const x = f() // {@link Known} stays code here',
      '```',
    ].join('\n'),
  )
})

test('F5: every interface and class is shown whole, up to its closing brace, whatever quotes its comments hold', async () => {
  const report = await generateApiReport()
  const cut: string[] = []
  for (const list of report.entries.values())
    for (const e of list)
      for (const source of e.sources)
        if (/^(?:declare\s+)?(?:abstract\s+)?(?:class|interface)\s/.test(source) && !/\}\s*$/.test(source))
          cut.push(e.name)
  assert.deepEqual(cut, [])
  const spec = pages.get('./operator')!.split('## OperatorSpec')[1]!.split('\n## ')[0]!
  for (const member of ['instance?', 'startFields?', 'installHint?', 'check?', 'envPrefix?', 'webhooks?'])
    assert.ok(spec.includes(`    ${member}`), member)
})
