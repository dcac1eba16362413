/**
 * @module path-escapes — finding source lines that read or cite a path outside the repository.
 *
 * edgeop must be whole in its own repository: a fresh clone may not depend on, or point a
 * reader to, files beside it. Two kinds of evidence, line by line:
 * - a literal that names the development machine's shared area: its absolute work
 *   directory, or a `shared` folder beside the repository reached with `..`;
 * - a relative path expression with `..` segments (string literals joined by commas as
 *   `join`/`resolve` arguments, template literals, shell `$(dirname "$0")/…`, Markdown
 *   links and backticked paths), resolved against the file's directory, or against the
 *   repository root when the expression starts from `ROOT`, that lands outside the root.
 *   Absolute literals are not resolved (`/etc/passwd`, `/proc` are legitimate system paths).
 * It is a heuristic over text, not an evaluator: it finds the ways this repository builds
 * paths, and its unit test pins each of them.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path'

/** One offending line. */
export interface PathEscape {
  /** Path relative to the repository root. */
  file: string
  /** 1-based line number. */
  line: number
  /** The path expression (at most {@link MAX_SHOWN} characters) and why it offends. */
  reason: string
}

/** Longest excerpt of a source line a report shows (never echo unbounded input). */
const MAX_SHOWN = 80

/**
 * Literals that name the development machine's shared area, whatever they are joined to.
 * Spelled in pieces so that this file does not match itself.
 */
const FORBIDDEN = [
  { pattern: new RegExp(`(^|[^\\w.-])/${'work'}/`), what: 'the machine-wide work directory' },
  { pattern: new RegExp(`(^|[^\\w.])\\.\\./${'shared'}\\b`), what: 'a shared folder beside the repository' },
]

/** A string literal in code: single, double or backtick quoted, on one line. */
const CODE_LITERAL = /'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`([^`\n]*)`/g
/** In Markdown: a backticked span or a link target. */
const MARKDOWN_LITERAL = /`([^`\n]+)`|\]\(([^)\s]+)\)/g

/** Marks an absolute base inside an expression before resolution. */
const ROOT_TOKEN = '\u0000ROOT\u0000'
const HERE_TOKEN = '\u0000HERE\u0000'

const shorten = (s: string): string => (s.length > MAX_SHOWN ? `${s.slice(0, MAX_SHOWN)}…` : s)

/** Shell spellings of "this script's directory", replaced by a token before literals are read. */
function markShellBases(line: string): string {
  return line.replace(
    /\$\(\s*dirname\s+"?\$(?:0|\{BASH_SOURCE\[0\]\}|BASH_SOURCE)"?\s*\)|\$\{?here\}?/g,
    HERE_TOKEN,
  )
}

/** Template-literal substitutions: `${ROOT}` and `${import.meta.dirname}` are bases, others a plain segment. */
function markTemplateBases(text: string): string {
  return text
    .replace(/\$\{\s*ROOT\s*\}/g, ROOT_TOKEN)
    .replace(/\$\{\s*(?:import\.meta\.dirname|__dirname|HERE)\s*\}/g, HERE_TOKEN)
    .replace(/\$\{[^}]*\}/g, '_')
}

/** Literals on one line, with adjacent comma-separated literals joined as `join` would. */
function pathGroups(line: string, markdown: boolean): { text: string; before: string }[] {
  const groups: { text: string; before: string }[] = []
  let lastEnd = -1
  for (const m of line.matchAll(markdown ? MARKDOWN_LITERAL : CODE_LITERAL)) {
    const raw = m[1] ?? m[2] ?? m[3] ?? ''
    const text = m[3] !== undefined || markdown ? markTemplateBases(raw) : raw
    const previous = groups.at(-1)
    if (previous && !markdown && /^\s*,\s*$/.test(line.slice(lastEnd, m.index))) previous.text += `/${text}`
    else groups.push({ text, before: line.slice(0, m.index) })
    lastEnd = m.index + m[0].length
  }
  return groups
}

/** Where a path group resolves, or undefined when it is not a path that climbs with `..`. */
function resolveGroup(
  group: { text: string; before: string },
  root: string,
  fileDir: string,
): string | undefined {
  let text = group.text
  if (/\s/.test(text.replaceAll(ROOT_TOKEN, '').replaceAll(HERE_TOKEN, ''))) return undefined
  if (!text.split('/').includes('..')) return undefined
  let base = fileDir
  if (text.startsWith(ROOT_TOKEN)) {
    base = root
    text = text.slice(ROOT_TOKEN.length)
  } else if (text.startsWith(HERE_TOKEN)) {
    text = text.slice(HERE_TOKEN.length)
  } else if (/\bROOT\s*,\s*$/.test(group.before)) {
    base = root // join(ROOT, <literals>)
  }
  if (text.includes(ROOT_TOKEN) || text.includes(HERE_TOKEN)) return undefined
  if (text === group.text && isAbsolute(text)) return undefined
  return resolve(base, text.replace(/^\/+/, ''))
}

const isInside = (root: string, path: string): boolean => {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}

/**
 * Every line of `source` (the text of `file`, an absolute path under `root`) that names the
 * shared area or builds a path resolving outside `root`.
 */
export function findPathEscapes(root: string, file: string, source: string): PathEscape[] {
  const escapes: PathEscape[] = []
  const fileDir = dirname(file)
  const markdown = extname(file) === '.md'
  const shell = extname(file) === '.sh' || extname(file) === '' || extname(file) === '.env'
  const lines = source.split('\n')
  for (const [index, raw] of lines.entries()) {
    const report = (reason: string): void => {
      escapes.push({ file: relative(root, file), line: index + 1, reason })
    }
    for (const { pattern, what } of FORBIDDEN) {
      const m = pattern.exec(raw)
      if (m) report(`${what}: ${shorten(raw.slice(m.index).trim())}`)
    }
    const line = shell ? markShellBases(raw) : raw
    for (const group of pathGroups(line, markdown)) {
      const target = resolveGroup(group, root, fileDir)
      if (target !== undefined && !isInside(root, target)) {
        const shown = group.text.replaceAll(ROOT_TOKEN, 'ROOT').replaceAll(HERE_TOKEN, '<this dir>')
        report(`${shorten(shown)} resolves outside the repository`)
      }
    }
  }
  return escapes
}

/** What the repository-wide scan reads: these top-level folders and files. */
export const SCANNED = [
  'src',
  'test',
  'build',
  'deploy',
  '.ci',
  'docs',
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  'package.json',
] as const

/** Folders never scanned: installed dependencies and build output, not our text. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist'])

function walk(path: string, out: string[]): void {
  let entries: import('node:fs').Dirent[]
  try {
    entries = readdirSync(path, { withFileTypes: true })
  } catch {
    out.push(path) // a file
    return
  }
  for (const e of entries) {
    if (e.isDirectory() && !SKIPPED_DIRS.has(e.name)) walk(join(path, e.name), out)
    else if (e.isFile()) out.push(join(path, e.name))
  }
}

/** Scans {@link SCANNED} under `root`; text files only (a NUL byte marks a binary). */
export function scanRepository(root: string): { files: number; escapes: PathEscape[] } {
  const files: string[] = []
  for (const top of SCANNED) walk(join(root, top), files)
  const escapes: PathEscape[] = []
  let read = 0
  for (const file of files) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      continue // listed in SCANNED but absent
    }
    if (text.includes('\u0000')) continue
    read++
    escapes.push(...findPathEscapes(root, file, text))
  }
  return { files: read, escapes }
}
