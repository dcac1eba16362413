/**
 * @module init-command — `npx edgeop init <dir>`: a new operator project from the package's
 * `templates/init/`: a strict TypeScript config, an operator with one CRD written in zod and run by
 * `runOperator`, a test on `edgeop/testing`, the build to one artifact (`edgeop()` esbuild plugin)
 * and its image: an OCI layout built without Docker (`image.ts`), and a Dockerfile for machines with one.
 *
 * The templates are plain files; `{{name}}` becomes the project's name and `{{version:<package>}}`
 * the range of that package edgeop itself is built with, so a new project starts on the versions
 * edgeop's own tests ran.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { EdgeopError, quoteInput } from '../core/index.ts'
import { stringFlag } from './flags/flags.ts'
import { type Command, defineCommand, EXIT_USAGE } from './run-cli.ts'

/** Template files whose name npm pack would drop or act on, stored without their leading dot. */
const DOTFILES: Readonly<Record<string, string>> = { gitignore: '.gitignore', dockerignore: '.dockerignore' }

/** What {@link initCommand} reads from the installed edgeop package. */
export interface InitSource {
  /** The directory of edgeop's package.json (templates/init/ is under it). */
  packageRoot: string
  /** Where the list of created files goes. Default `process.stdout`. */
  stdout?: { write(s: string): unknown }
  /** Where a refusal goes, as `edgeop: <line>`. Default `process.stderr`. */
  stderr?: { write(s: string): unknown }
}

interface PackageJson {
  version: string
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}

/** A package name npm accepts for the new project: the directory's name, lower-cased, other characters as `-`. */
export function projectName(dir: string): string {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
  return name.slice(0, 63).replace(/-+$/, '') || 'operator'
}

/**
 * The dependency spec for edgeop in the new project: a version range as given, or a path (a packed
 * tarball or a checkout) as `file:` with an absolute path, since the project's npm resolves it.
 */
export function edgeopDependency(spec: string, cwd: string): string {
  const isPath = spec.startsWith('.') || isAbsolute(spec) || spec.endsWith('.tgz')
  return isPath ? `file:${resolve(cwd, spec)}` : spec
}

/** Every file under `dir`, relative to it, sorted. */
async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name
    if (e.isDirectory()) out.push(...(await filesUnder(dir, rel)))
    else out.push(rel)
  }
  return out.sort()
}

/** `text` with `{{name}}` and each `{{version:<package>}}` filled in; an unknown package throws. */
export function fillTemplate(text: string, name: string, versions: Readonly<Record<string, string>>): string {
  return text.replace(/\{\{(name|version:([@a-z0-9/._-]+))\}\}/g, (_, key: string, pkg?: string) => {
    if (key === 'name') return name
    const version = versions[pkg!]
    if (version === undefined) throw new EdgeopError('EDGEOP_ERR_INVALID', `template: no version of ${pkg}`)
    return version
  })
}

/** The ranges a new project uses: edgeop's dependencies as they are, its exact dev versions as `^x.y.z`. */
function versionsOf(pkg: PackageJson): Record<string, string> {
  const dev = Object.entries(pkg.devDependencies ?? {}).map(([n, v]) => [n, /^\d/.test(v) ? `^${v}` : v])
  return { ...Object.fromEntries(dev), ...pkg.dependencies }
}

/** Why `dir` cannot take a new project (it holds something), or undefined when it is missing or empty. */
export async function nonEmptyDirectory(dir: string): Promise<string | undefined> {
  const existing = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return []
    throw err
  })
  if (existing.length === 0) return undefined
  return `init: ${quoteInput(dir)} is not empty (${existing.length} entries): give a new or empty directory`
}

/**
 * Creates the project in `dir` (made if missing). Refuses a directory that holds anything, with one
 * `EDGEOP_ERR_INVALID` naming it, before writing a file. Resolves with the created files, relative to `dir`.
 */
export async function initProject(dir: string, edgeopSpec: string | undefined, source: InitSource) {
  const refused = await nonEmptyDirectory(dir)
  if (refused !== undefined) throw new EdgeopError('EDGEOP_ERR_INVALID', refused)
  const pkg = JSON.parse(await readFile(join(source.packageRoot, 'package.json'), 'utf8')) as PackageJson
  const versions = {
    ...versionsOf(pkg),
    edgeop: edgeopDependency(edgeopSpec || `^${pkg.version}`, process.cwd()),
  }
  const templates = join(source.packageRoot, 'templates/init')
  const name = projectName(dir)
  const created: string[] = []
  for (const file of await filesUnder(templates)) {
    const target = join(dirname(file), DOTFILES[basename(file)] ?? basename(file))
    await mkdir(dirname(join(dir, target)), { recursive: true })
    await writeFile(
      join(dir, target),
      fillTemplate(await readFile(join(templates, file), 'utf8'), name, versions),
    )
    created.push(relative('.', target))
  }
  return created
}

/**
 * The `init` command: `edgeop init <dir> [--edgeop <version|tarball>]`. Exits 2 with one line when the
 * arguments are not one directory or the directory holds anything (a usage error, as a precheck's).
 */
export function initCommand(source: InitSource): Command<{ edgeop: ReturnType<typeof stringFlag> }> {
  return defineCommand({
    description:
      'Create an operator project in <dir>: TypeScript, one CRD, a test, a one-file build, an OCI image',
    flags: {
      edgeop: stringFlag('The edgeop dependency: a version range, or the path of a packed tarball.', {
        placeholder: 'spec',
      }),
    },
    args: true,
    async run(values, args) {
      const dir = args[0]!
      const refused =
        args.length === 1
          ? await nonEmptyDirectory(dir)
          : `init: expected one directory, got ${args.length} arguments`
      if (refused !== undefined) {
        ;(source.stderr ?? process.stderr).write(`edgeop: ${refused}\n`)
        return EXIT_USAGE
      }
      const created = await initProject(dir, values.edgeop, source)
      const out = source.stdout ?? process.stdout
      out.write(`created ${created.length} files in ${dir}:\n${created.map((f) => `  ${f}\n`).join('')}`)
      out.write(`next: cd ${dir} && npm install && npm test && npm run build\n`)
    },
  })
}
