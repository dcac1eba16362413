/**
 * @module readme — code blocks of the repository's README.md that tests compile or run as written.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

/** The heading of the README section whose first ```ts block is the controller example. */
export const README_CONTROLLER_HEADING = '## Write your own controller'
/** The heading of the README's first screen for library users, whose first ```ts block is a controller too. */
export const README_LIBRARY_HEADING = '## Use it as a library'

/**
 * The first ```ts block after {@link README_CONTROLLER_HEADING} in `<root>/README.md`, exactly as
 * written (it imports from `'edgeop'`). Throws naming the heading when the section or block is gone.
 */
export async function readmeControllerExample(
  root: string,
  heading = README_CONTROLLER_HEADING,
): Promise<string> {
  const readme = await readFile(join(root, 'README.md'), 'utf8')
  const at = readme.indexOf(heading)
  const m = at < 0 ? null : /```ts\n([\s\S]*?)```/.exec(readme.slice(at))
  if (!m?.[1]) throw new Error(`README.md has no \`\`\`ts block under "${heading}"`)
  return m[1]
}
