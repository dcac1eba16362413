/**
 * @module build/api-docs — `npm run docs:api`: the API reference, `docs/api/<subpath>.md`, rendered
 * from the emitted declarations and their TSDoc.
 *
 * It reads what `build/api-report.ts` collects (the public names of every subpath, each with its
 * doc comment and its declaration with member comments) and writes one page per subpath plus an
 * index. `test/build/api-docs.test.ts` regenerates the pages and fails when the committed ones
 * differ, so the reference never drifts from the code.
 *
 * TSDoc handled: `{@link Name}` and `{@link Name.member}` become links to the name's section (on
 * this page, or on the page of the subpath that declares it); `@example` becomes a code block;
 * `@param`, `@throws` and `@deprecated` become labelled lines. Other text is Markdown already.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { type ApiEntry, type ApiReport, generateApiReport } from './api-report.ts'
import { ROOT } from './artifact.ts'

/** The page of `subpath` (`.` → `edgeop.md`), relative to `docs/api/`. */
export const pageName = (subpath: string): string => `${subpath === '.' ? 'edgeop' : subpath.slice(2)}.md`

/** Where the committed page of `subpath` lives; `index` is the index page. */
export const docsPath = (subpath: string | 'index'): string =>
  join(ROOT, 'docs', 'api', subpath === 'index' ? 'README.md' : pageName(subpath))

/** The import specifier of `subpath`. */
const specifier = (subpath: string): string => (subpath === '.' ? 'edgeop' : `edgeop/${subpath.slice(2)}`)

/** Heading anchor of each name of a page → its anchor. */
type Anchors = ReadonlyMap<string, string>

/**
 * The GitHub heading anchors of a page whose headings are `names`, in order: lower case, and a
 * `-1`, `-2`, … suffix on a repeat (`ObjectKey` and `objectKey` share a page).
 */
function anchorsOf(names: readonly string[]): Anchors {
  const out = new Map<string, string>()
  const used = new Map<string, number>()
  for (const name of names) {
    const base = name.toLowerCase().replace(/[^\w-]/g, '')
    const n = used.get(base) ?? 0
    used.set(base, n + 1)
    out.set(name, n === 0 ? base : `${base}-${n}`)
  }
  return out
}

/** The top directory of a declaration file (`core/clock.d.ts` → `core`): the subpath declaring it. */
const homeDir = (file: string): string => file.split('/')[0] ?? ''

/** The folder under src/ of a subpath's index.ts, read from package.json's `exports` (`./protobuf` → `codec/protobuf`). */
async function sourceDirOf(subpath: string): Promise<string> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, { types?: string } | string>
  }
  const entry = pkg.exports[subpath]
  const types = typeof entry === 'object' ? entry.types : undefined
  return types?.replace(/^\.\/dist\/types\//, '').replace(/\/index\.d\.ts$/, '') ?? subpath.slice(2)
}

/** The `@module` line of `src/<subpath>/index.ts`: what the subpath is for. */
async function moduleSummary(subpath: string): Promise<string> {
  const file = join(ROOT, 'src', subpath === '.' ? '' : await sourceDirOf(subpath), 'index.ts')
  const text = await readFile(file, 'utf8').catch(() => '')
  const m = /@module\s+\S+\s+—\s+([\s\S]*?)\*\//.exec(text)
  const summary = (m?.[1] ?? '')
    .split('\n')
    .map((l) => l.replace(/^\s*\* ?/, '').trim())
    .join(' ')
    .trim()
  return summary.charAt(0).toUpperCase() + summary.slice(1)
}

/** Resolves `{@link …}` targets to Markdown links. */
type Linker = (target: string) => string

function linker(
  page: string,
  anchors: ReadonlyMap<string, Anchors>,
  homes: ReadonlyMap<string, string>,
): Linker {
  return (target) => {
    const name = target.split('.')[0] ?? target
    const code = `\`${target}\``
    const here = anchors.get(page)?.get(name)
    if (here) return `[${code}](#${here})`
    const home = homes.get(name)
    const there = home && anchors.get(home)?.get(name)
    return there ? `[${code}](${home}#${there})` : code
  }
}

/** A doc comment's text as Markdown: links resolved, block tags labelled, examples fenced. */
export function renderDoc(doc: string, link: Linker): string {
  const out: string[] = []
  let inExample = false
  let inFence = false
  for (const raw of doc.split('\n')) {
    const line = raw.replace(/\{@link\s+([^}\s|]+)\s*(?:\|[^}]*)?\}/g, (_m, t: string) => link(t))
    if (/^```/.test(raw.trim())) inFence = !inFence
    const tag = inFence ? null : /^@(\w+)\s*(.*)$/.exec(raw.trim())
    if (tag) {
      if (inExample) out.push('```')
      inExample = false
      const [, name, rest] = tag as unknown as [string, string, string]
      const text = rest.replace(/\{@link\s+([^}\s|]+)\s*(?:\|[^}]*)?\}/g, (_m, t: string) => link(t))
      if (name === 'example') {
        out.push('', 'Example:', '', '```ts')
        if (text) out.push(text)
        inExample = true
      } else if (name === 'param') {
        const [, param, desc] = /^(\S+)\s*-?\s*(.*)$/.exec(text) ?? ['', text, '']
        out.push('', `**Parameter** \`${param}\`: ${desc}`)
      } else if (name === 'throws') out.push('', `**Throws** ${text}`)
      else if (name === 'deprecated') out.push('', `**Deprecated.** ${text}`)
      else out.push('', `**@${name}** ${text}`)
      continue
    }
    out.push(inExample ? raw : line)
  }
  if (inExample) out.push('```')
  return out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}

/** What kind of declaration `declaration` is, for the line under its heading. */
function kindOf(declaration: string): string {
  const m = /^(?:abstract\s+)?(const|let|var|function|class|interface|type)\b/.exec(declaration)
  const k = m?.[1] ?? 'declaration'
  return { const: 'constant', let: 'variable', var: 'variable', type: 'type' }[k] ?? k
}

function renderPage(
  subpath: string,
  entries: readonly ApiEntry[],
  summary: string,
  homes: ReadonlyMap<string, string>,
  anchors: ReadonlyMap<string, Anchors>,
): string {
  const page = pageName(subpath)
  const link = linker(page, anchors, homes)
  const anchor = (name: string, on = page): string => anchors.get(on)?.get(name) ?? ''
  const lines = [
    `# \`${specifier(subpath)}\``,
    '',
    `Generated by \`npm run docs:api\` (build/api-docs.ts) from the TSDoc of the sources; do not edit.`,
    '',
  ]
  if (summary) lines.push(`${summary}`, '')
  if (subpath === '.') {
    lines.push('Each name is also on its subpath; it links to its documentation there.', '')
    const bySubpath = new Map<string, string[]>()
    for (const e of entries) {
      const home = homes.get(e.name) ?? page
      bySubpath.set(home, [
        ...(bySubpath.get(home) ?? []),
        `[\`${e.name}\`](${home}#${anchor(e.name, home)})`,
      ])
    }
    for (const [home, names] of [...bySubpath].sort((a, b) => a[0].localeCompare(b[0])))
      lines.push(`- **${home.replace(/\.md$/, '')}**: ${names.join(', ')}`)
    return `${lines.join('\n')}\n`
  }
  lines.push(`${entries.length} public names, in alphabetical order.`, '')
  lines.push(entries.map((e) => `[\`${e.name}\`](#${anchor(e.name)})`).join(' · '), '')
  for (const e of entries) {
    lines.push(`## ${e.name}`, '')
    const home = homes.get(e.name)
    const from = home && home !== page ? `, declared in [${home.replace(/\.md$/, '')}](${home})` : ''
    lines.push(`*${kindOf(e.declarations[0] ?? '')}* · \`${e.file.replace(/\.d\.ts$/, '.ts')}\`${from}`, '')
    if (e.doc) lines.push(renderDoc(e.doc, link), '')
    lines.push('```ts', ...e.sources, '```', '')
  }
  return `${lines.join('\n').replace(/\n+$/, '')}\n`
}

/** The pages of the reference: subpath → Markdown, plus `index` → the index page. */
export async function renderApiDocs(report: ApiReport): Promise<Map<string, string>> {
  const subpaths = [...report.entries.keys()]
  const dirs = new Map(subpaths.filter((s) => s !== '.').map((s) => [s.slice(2), pageName(s)]))
  const homes = new Map<string, string>()
  for (const [subpath, list] of report.entries) {
    if (subpath === '.') continue
    for (const e of list) {
      // A name declared in a room without a subpath of its own (transport, codec) is at home on the
      // first subpath that exports it.
      const home = dirs.get(homeDir(e.file)) ?? (homes.has(e.name) ? undefined : pageName(subpath))
      if (home) homes.set(e.name, home)
    }
  }
  const anchors = new Map(
    subpaths.map((s) => [pageName(s), anchorsOf((report.entries.get(s) ?? []).map((e) => e.name))]),
  )
  const pages = new Map<string, string>()
  const index = [
    '# API reference',
    '',
    'Generated by `npm run docs:api` (build/api-docs.ts) from the TSDoc of the sources; do not edit.',
    'The guide explaining how the parts fit is [../guide.md](../guide.md).',
    '',
    '| import | what it is for |',
    '| --- | --- |',
  ]
  for (const subpath of subpaths) {
    const summary = await moduleSummary(subpath)
    pages.set(subpath, renderPage(subpath, report.entries.get(subpath) ?? [], summary, homes, anchors))
    index.push(`| [\`${specifier(subpath)}\`](${pageName(subpath)}) | ${summary.replace(/\|/g, '\\|')} |`)
  }
  pages.set('index', `${index.join('\n')}\n`)
  return pages
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const pages = await renderApiDocs(await generateApiReport())
  for (const [subpath, text] of pages) {
    const path = docsPath(subpath)
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, text)
  }
  process.stdout.write(`docs/api/: ${pages.size} pages\n`)
}
