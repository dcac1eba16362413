/**
 * @module doc-references — what a Markdown file of the repository points at: relative links and their
 * anchors, repository paths in code spans, `npm` scripts and `node <file>` commands. Pure functions
 * over text; test/docs.test.ts checks each against the checkout.
 */

/** One reference found in a Markdown file, with its 1-based line. */
export interface DocReference {
  readonly line: number
  readonly text: string
}

/** A relative Markdown link: its path (relative to the file, `''` for the file itself) and its anchor. */
export interface DocLink extends DocReference {
  readonly path: string
  readonly anchor: string | undefined
}

/** Top-level folders whose paths the documentation names in code spans; `dist/` is build output, not checked. */
export const CHECKED_FOLDERS = [
  'src',
  'test',
  'build',
  'deploy',
  'config',
  'charts',
  'examples',
  'docs',
  'api',
  '.ci',
]

/** Characters that mark a code span as a pattern or placeholder rather than one path (`<date>`, `**`, `…`, `{a,b}`). */
const PLACEHOLDER = /[<>*…{}$[\]|]/

/** Fenced code blocks, blanked line for line so that line numbers stay and links inside are not read. */
function proseLines(markdown: string): string[] {
  let fenced = false
  return markdown.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced
      return ''
    }
    return fenced ? '' : line
  })
}

/** The line of a code fence opened and never closed (which would hide every link after it), or undefined. */
export function unclosedFence(markdown: string): number | undefined {
  let opened: number | undefined
  for (const [i, line] of markdown.split('\n').entries())
    if (/^\s*```/.test(line)) opened = opened === undefined ? i + 1 : undefined
  return opened
}

/**
 * GitHub's anchor for a heading: lowercased, every character but letters, digits, spaces, `-` and `_`
 * dropped, spaces turned into `-`.
 */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')
}

/** Every anchor a Markdown file offers: one per heading, repeats numbered `-1`, `-2` as GitHub does. */
export function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const line of proseLines(markdown)) {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)
    if (!m?.[1]) continue
    const slug = headingSlug(m[1])
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    anchors.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return anchors
}

/** Every relative link and image (`[x](path#anchor)`, `![x](path)`) outside code; URLs with a scheme are left out. */
export function relativeLinks(markdown: string): DocLink[] {
  const links: DocLink[] = []
  for (const [i, line] of proseLines(markdown).entries()) {
    const withoutSpans = line.replace(/`[^`]*`/g, '')
    for (const m of withoutSpans.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1] ?? ''
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
      const hash = target.indexOf('#')
      links.push({
        line: i + 1,
        text: target,
        path: hash < 0 ? target : target.slice(0, hash),
        anchor: hash < 0 ? undefined : target.slice(hash + 1),
      })
    }
  }
  return links
}

/**
 * Repository paths named in code spans (`src/main.ts`, `deploy/agent/`, `test/x.ts:12`), relative to the
 * repository root as the documentation writes them. Spans with placeholders or globs are skipped; a
 * span holding a command is read word by word.
 */
export function codeSpanPaths(markdown: string): DocReference[] {
  const paths: DocReference[] = []
  const folders = CHECKED_FOLDERS.map((f) => f.replace('.', '\\.')).join('|')
  const pathWord = new RegExp(`^(?:${folders})/[\\w./@-]*$`)
  for (const [i, line] of markdown.split('\n').entries()) {
    for (const span of line.matchAll(/`([^`]+)`/g)) {
      for (const word of (span[1] ?? '').split(/\s+/)) {
        if (PLACEHOLDER.test(word)) continue
        const bare = word.replace(/[,;)]+$/, '').replace(/:\d+(-\d+)?$/, '')
        if (pathWord.test(bare)) paths.push({ line: i + 1, text: bare })
      }
    }
  }
  return paths
}

/** `npm run <script>`, `npm start` and `npm test` anywhere in the file (prose, code spans, code blocks). */
export function npmScripts(markdown: string): DocReference[] {
  const scripts: DocReference[] = []
  for (const [i, line] of markdown.split('\n').entries()) {
    for (const m of line.matchAll(/\bnpm (?:run ([\w:-]+)|(start|test)\b)/g)) {
      scripts.push({ line: i + 1, text: m[1] ?? m[2] ?? '' })
    }
  }
  return scripts
}

/** The files `node` is told to run (`node test/bench/queue.bench.ts`, `node --test test/x.test.ts`). */
export function nodeCommands(markdown: string): DocReference[] {
  const files: DocReference[] = []
  for (const [i, line] of markdown.split('\n').entries()) {
    for (const m of line.matchAll(
      /\bnode (?:--[\w-]+(?:=\S+)? )*((?:src|test|build|examples)\/[\w./-]+\.[cm]?[jt]s)\b/g,
    )) {
      files.push({ line: i + 1, text: m[1] ?? '' })
    }
  }
  return files
}

/**
 * The flags a Markdown table documents: every `` `--flag` `` in the first cell of each row of the table
 * whose header's first cell is `flag`.
 */
export function flagTable(markdown: string): Set<string> {
  const flags = new Set<string>()
  let inTable = false
  for (const line of markdown.split('\n')) {
    if (/^\|\s*flag\s*\|/.test(line)) inTable = true
    else if (!line.startsWith('|')) inTable = false
    else if (inTable) {
      const first = line.split('|')[1] ?? ''
      for (const m of first.matchAll(/`(--[a-z][\w-]*)/g)) flags.add(m[1] ?? '')
    }
  }
  return flags
}

/** Rows of the table whose header's first cell is `command`: the command and the flags its first cell names. */
export function commandTable(markdown: string): Map<string, string[]> {
  const commands = new Map<string, string[]>()
  let inTable = false
  for (const line of markdown.split('\n')) {
    if (/^\|\s*command\s*\|/.test(line)) inTable = true
    else if (!line.startsWith('|')) inTable = false
    else if (inTable && !/^\|\s*-/.test(line)) {
      const first = line.split('|')[1] ?? ''
      const name = /`([a-z]+)/.exec(first)?.[1]
      if (name)
        commands.set(
          name,
          [...first.matchAll(/(--[a-z][\w-]*)/g)].map((m) => m[1] ?? ''),
        )
    }
  }
  return commands
}

/** The flags a `--help` text lists (`  --name …` at the start of a line). */
export function helpFlags(help: string): Set<string> {
  return new Set([...help.matchAll(/^ {2}(--[a-z][\w-]*)/gm)].map((m) => m[1] ?? ''))
}

/** The commands a top-level `--help` text lists under `Commands:`. */
export function helpCommands(help: string): Set<string> {
  const section = /Commands:\n((?: {2}\S.*\n)+)/.exec(help)?.[1] ?? ''
  return new Set([...section.matchAll(/^ {2}([a-z]+)/gm)].map((m) => m[1] ?? ''))
}
