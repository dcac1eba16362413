/**
 * @module build/api-report — `npm run api:report`: the public surface of every subpath, as reviewed text.
 *
 * Emits declarations with tsc (the same `tsconfig.build.json` the package ships), then, for each
 * subpath of package.json `exports`, follows its `index.d.ts` re-exports and writes `api/<subpath>.api.md`:
 * every public name with its declaration, doc comments removed. `test/build/api-report.test.ts`
 * regenerates the report and fails when it differs from the committed one, so a new, removed or
 * changed public name is a diff someone reviewed (api-extractor's idea, without its dependency).
 *
 * The same pass counts public declarations and members that carry no TSDoc comment; the test
 * requires none. It also keeps each declaration's doc comment and its source with member
 * comments, which `build/api-docs.ts` renders as the API reference in `docs/api/`.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { ROOT } from './artifact.ts'

/** One top-level statement of a declaration file, with the doc comment right above it. */
interface Block {
  text: string
  /** The doc comment above the statement, as written (`/** … *\/`), or undefined. */
  doc: string | undefined
}

/** A public name as a subpath exposes it. */
export interface ApiEntry {
  name: string
  /** The declaration file it comes from, relative to the declarations' root. */
  file: string
  /** Declarations of that name, doc comments removed (several for overloads). */
  declarations: string[]
  /** The same declarations with the doc comments of their members kept. */
  sources: string[]
  /** The doc comment of the name (the first of its declarations that has one), without its comment markers. */
  doc: string | undefined
  /** `name` or `name.member` for every public declaration or member without a doc comment. */
  undocumented: string[]
}

export interface ApiReport {
  /** subpath (`.`, `./client`, …) → its rendered report. */
  files: Map<string, string>
  /** subpath → its entries. */
  entries: Map<string, ApiEntry[]>
}

/**
 * Splits a `.d.ts` text into top-level statements, keeping the `/** … *\/` comment that precedes
 * each. A type alias ends only at its `;` (a union of object types has lines ending in `}`).
 */
function splitStatements(text: string): Block[] {
  const lines = text.split('\n')
  const blocks: Block[] = []
  let doc: string[] = []
  let inDoc = false
  let current: string[] = []
  let depth = 0
  /** Inside a member's comment: its brackets and quotes (`Events' …`) are prose, not code. */
  let inComment = false
  for (const line of lines) {
    if (current.length === 0) {
      if (inDoc) {
        doc.push(line)
        if (line.includes('*/')) inDoc = false
        continue
      }
      if (/^\s*\/\*\*/.test(line)) {
        doc = [line]
        inDoc = !line.includes('*/')
        continue
      }
      if (line.trim() === '' || line.startsWith('//')) continue
    }
    current.push(line)
    const c = codeOf(line, inComment)
    inComment = c.inComment
    depth +=
      count(c.code, '{') +
      count(c.code, '(') +
      count(c.code, '[') -
      count(c.code, '}') -
      count(c.code, ')') -
      count(c.code, ']')
    const typeAlias = /^(?:export\s+)?(?:declare\s+)?type\s/.test(current[0]!)
    if (depth <= 0 && (typeAlias ? /;\s*$/ : /[;}]\s*$/).test(line)) {
      blocks.push({ text: current.join('\n'), doc: doc.length ? doc.join('\n') : undefined })
      current = []
      depth = 0
      doc = []
    }
  }
  return blocks
}

/**
 * The code of `line` without its comments and with its strings emptied, and whether a block comment
 * is still open after it: scanned in one pass, so `'` in a comment and `//` in a string are neither.
 */
function codeOf(line: string, inComment: boolean): { code: string; inComment: boolean } {
  let code = ''
  let quote = ''
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!
    if (inComment) {
      if (ch === '*' && line[i + 1] === '/') {
        inComment = false
        i++
      }
    } else if (quote) {
      if (ch === '\\') i++
      else if (ch === quote) quote = ''
    } else if (ch === '/' && line[i + 1] === '/') break
    else if (ch === '/' && line[i + 1] === '*') {
      inComment = true
      i++
    } else if (ch === "'" || ch === '"' || ch === '`') quote = ch
    else code += ch
  }
  return { code, inComment }
}

function count(line: string, ch: string): number {
  let n = 0
  for (const c of stripStrings(line)) if (c === ch) n++
  return n
}
const stripStrings = (line: string): string =>
  line.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`/g, '""')

/** The name a top-level statement declares, if any. */
function declaredName(block: string): string | undefined {
  const m =
    /^(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(?:const|let|var|function|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/.exec(
      block,
    )
  return m?.[1]
}

/** Removes doc and line comments from a declaration, for the report. */
function withoutComments(text: string): string {
  return text
    .replace(/^\s*\/\*\*[\s\S]*?\*\/\n/gm, '')
    .replace(/\/\*\*[\s\S]*?\*\/\s*/g, '')
    .split('\n')
    .filter((l) => !/^\s*\/\//.test(l))
    .join('\n')
}

/**
 * Members of a class or interface declared without a doc comment. A member is a line at the
 * first indentation level that starts a property, method, accessor or signature; `#private`,
 * `private` and `protected` members are not public.
 */
function undocumentedMembers(block: string): string[] {
  const lines = block.split('\n')
  const out: string[] = []
  let docAbove = false
  let depth = 0
  for (const [i, line] of lines.entries()) {
    if (i === 0) {
      depth += count(line, '{') - count(line, '}')
      continue
    }
    const atMemberLevel = depth === 1
    const trimmed = line.trim()
    if (atMemberLevel && trimmed.startsWith('/**')) docAbove = true
    else if (atMemberLevel && trimmed && !trimmed.startsWith('*') && !trimmed.startsWith('}')) {
      const m =
        /^(?:readonly\s+|static\s+|abstract\s+|get\s+|set\s+|async\s+)*(\[?[A-Za-z_$#][\w$]*\]?|\[[^\]]+\]|\([^)]*)/.exec(
          trimmed,
        )
      const member = m?.[1] ?? trimmed.slice(0, 20)
      const hidden = member.startsWith('#') || /^(private|protected)\s/.test(trimmed)
      if (!hidden && !docAbove) out.push(member.replace(/^\(.*/, '(call)'))
      docAbove = false
    }
    depth += count(line, '{') + count(line, '(') - count(line, '}') - count(line, ')')
  }
  return out
}

/** Named re-exports of an index file: name → declaration file it comes from (absolute). */
async function reexports(indexFile: string, seen = new Set<string>()): Promise<Map<string, string>> {
  const names = new Map<string, string>()
  if (seen.has(indexFile)) return names
  seen.add(indexFile)
  const text = await readFile(indexFile, 'utf8')
  for (const m of text.matchAll(/export\s+\*\s+from\s+['"]([^'"]+)['"]/g)) {
    const target = resolveDts(indexFile, m[1]!)
    for (const [n, f] of await reexports(target, seen)) names.set(n, f)
    for (const block of splitStatements(await readFile(target, 'utf8'))) {
      const n = declaredName(block.text)
      if (n && block.text.startsWith('export')) names.set(n, target)
    }
  }
  for (const m of text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}\s+from\s+['"]([^'"]+)['"]/g)) {
    const target = resolveDts(indexFile, m[2]!)
    const inner = await reexports(target, new Set(seen))
    for (const part of m[1]!.split(',')) {
      const s = part.trim().replace(/^type\s+/, '')
      if (!s) continue
      const [orig, alias] = s.split(/\s+as\s+/).map((x) => x.trim()) as [string, string | undefined]
      names.set(alias ?? orig, inner.get(orig) ?? target)
    }
  }
  return names
}
const withoutExport = (declaration: string): string => declaration.replace(/^export\s+(declare\s+)?/, '')

/** The text of a `/** … *\/` comment: markers and the leading ` * ` of each line removed. */
export function docText(comment: string): string {
  return comment
    .replace(/^\s*\/\*\*\s?/, '')
    .replace(/\s*\*\/\s*$/, '')
    .split('\n')
    .map((l) => l.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim()
}

const resolveDts = (from: string, spec: string): string =>
  resolve(dirname(from), spec.replace(/\.(ts|js)$/, '.d.ts'))

/** Builds the report from emitted declarations in `typesDir`. */
export async function apiReport(typesDir: string): Promise<ApiReport> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types?: string }>
  }
  const files = new Map<string, string>()
  const entries = new Map<string, ApiEntry[]>()
  const blocksByFile = new Map<string, Block[]>()
  const blocksOf = async (file: string): Promise<Block[]> => {
    const cached = blocksByFile.get(file)
    if (cached) return cached
    const blocks = splitStatements(await readFile(file, 'utf8'))
    blocksByFile.set(file, blocks)
    return blocks
  }
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string' || !target.types) continue
    const index = join(typesDir, relative('dist/types', target.types))
    const names = await reexports(index)
    const list: ApiEntry[] = []
    for (const [name, file] of [...names].sort((a, b) => a[0].localeCompare(b[0]))) {
      const blocks = (await blocksOf(file)).filter((b) => declaredName(b.text) === name)
      const undocumented: string[] = []
      if (blocks.length && !blocks.some((b) => b.doc)) undocumented.push(name)
      for (const b of blocks)
        if (/^(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(?:class|interface)\s/.test(b.text))
          undocumented.push(...undocumentedMembers(b.text).map((m) => `${name}.${m}`))
      const doc = blocks.find((b) => b.doc)?.doc
      list.push({
        name,
        file: relative(typesDir, file),
        declarations: blocks.map((b) => withoutExport(withoutComments(b.text))),
        sources: blocks.map((b) => withoutExport(b.text)),
        doc: doc === undefined ? undefined : docText(doc),
        undocumented,
      })
    }
    entries.set(subpath, list)
    files.set(subpath, render(subpath, list))
  }
  return { files, entries }
}

function render(subpath: string, list: ApiEntry[]): string {
  const pkgName = subpath === '.' ? 'edgeop' : `edgeop/${subpath.slice(2)}`
  const lines = [
    `# API report: \`${pkgName}\``,
    '',
    `Generated by \`npm run api:report\` (build/api-report.ts); do not edit. ${list.length} public names.`,
    '',
  ]
  if (subpath === '.') {
    lines.push(
      'The package root: the hand-picked front door (src/index.ts). Each name and the folder that declares it:',
      '',
    )
    for (const e of list) lines.push(`- \`${e.name}\` (${e.file.replace(/\/[^/]+$/, '')})`)
    return `${lines.join('\n')}\n`
  }
  lines.push('```ts')
  for (const e of list) {
    lines.push(`// ${e.file}`)
    lines.push(...e.declarations)
    lines.push('')
  }
  lines.push('```')
  return `${lines.join('\n')}\n`
}

/** Emits declarations into a temporary directory and builds the report from them. */
export async function generateApiReport(): Promise<ApiReport> {
  const out = await mkdtemp(join(tmpdir(), 'edgeop-api-'))
  try {
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(ROOT, 'tsconfig.build.json'),
        '--outDir',
        out,
      ],
      { stdio: 'inherit' },
    )
    return await apiReport(out)
  } finally {
    await rm(out, { recursive: true, force: true })
  }
}

/** Where the committed report of `subpath` lives. */
export const reportPath = (subpath: string): string =>
  join(ROOT, 'api', `${subpath === '.' ? 'edgeop' : subpath.slice(2)}.api.md`)

if (import.meta.url === `file://${process.argv[1]}`) {
  const report = await generateApiReport()
  for (const [subpath, text] of report.files) await writeFile(reportPath(subpath), text)
  const missing = [...report.entries].flatMap(([s, list]) =>
    list.flatMap((e) => e.undocumented.map((u) => `${s}: ${u}`)),
  )
  const total = [...report.entries].reduce((n, [s, l]) => (s === '.' ? n + l.length : n), 0)
  process.stdout.write(
    `api/: ${report.files.size} reports, ${total} public names, ${missing.length} undocumented\n`,
  )
  if (process.argv.includes('--undocumented')) process.stdout.write(`${missing.join('\n')}\n`)
}
