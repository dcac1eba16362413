/**
 * @module build/doc-examples — the code blocks of the documentation that tests compile, bundle or run
 * as written: the first ```ts block under a heading of a Markdown file.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

/** Where a documented example lives: a Markdown file (relative to the repository root) and a heading in it. */
export interface DocExample {
  readonly file: string
  readonly heading: string
}

/** The README's example: the mirror controller on the `Manager` alone. */
export const README_EXAMPLE: DocExample = { file: 'README.md', heading: '## An example' }

/** The library guide's controller: the same mirror on `runOperator`, with the binary's flags, events and exit codes. */
export const LIBRARY_CONTROLLER_EXAMPLE: DocExample = {
  file: 'docs/library.md',
  heading: '## Write your own controller',
}

/**
 * The first ```ts block after `example.heading` in `<root>/<example.file>`, exactly as written (it
 * imports from `'edgeop'`). Throws naming the file and heading when the section or block is gone.
 */
export async function docExample(root: string, example: DocExample): Promise<string> {
  const text = await readFile(join(root, example.file), 'utf8')
  const at = text.indexOf(`\n${example.heading}\n`)
  const m = at < 0 ? null : /```ts\n([\s\S]*?)```/.exec(text.slice(at))
  if (!m?.[1]) throw new Error(`${example.file} has no \`\`\`ts block under "${example.heading}"`)
  return m[1]
}
