/**
 * @module crds — CustomResourceDefinitions for a test environment: read from objects, files or
 * directories, applied, and waited for until the apiserver serves them.
 *
 * "Installed" means what a controller needs before it can list and watch the kind (what envtest's
 * `WaitForCRDs` checks too): the CRD's `Established` and `NamesAccepted` conditions are `True`, and
 * discovery of its group/version lists the plural.
 */
import { readdir, stat } from 'node:fs/promises'
import { extname, join } from 'node:path'
import type { KubeClient } from '../client/kube-client.ts'
import { CORE_TYPES } from '../client/resource.ts'
import { parseYaml } from '../config/yaml/yaml.ts'
import { readBoundedText } from '../core/bounded-file.ts'
import { EdgeopError, isEdgeopError } from '../core/errors.ts'
import type { KubeObject } from '../core/types.ts'
import { eventually } from './eventually.ts'

/** A CRD to install: the object itself, or the path of a YAML/JSON file or of a directory of them. */
export type CrdSource = KubeObject | string

/** File extensions read from a CRD directory (not recursive, like envtest's `CRDDirectoryPaths`). */
export const CRD_FILE_EXTENSIONS: readonly string[] = ['.yaml', '.yml', '.json']

/**
 * How long to wait for CRDs to be established and served. The apiserver establishes a CRD within a
 * second or two; a loaded 2-core machine has been seen to need ten times that. envtest's default is 10 s.
 */
export const DEFAULT_CRD_INSTALL_TIMEOUT_MS = 30_000

/** Field manager of the server-side apply that installs CRDs. */
export const CRD_FIELD_MANAGER = 'edgeop-testing'

const CRD_API_VERSION = 'apiextensions.k8s.io/v1'

/** The part of a CRD this module reads. */
interface CrdShape extends KubeObject {
  spec?: { group?: string; names?: { plural?: string }; versions?: { name?: string; served?: boolean }[] }
  status?: { conditions?: { type: string; status: string }[] }
}

function invalid(message: string, step: string): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_INVALID', message, { step })
}

/** Splits YAML text into its documents (`---` lines), leaving out empty ones. */
export function yamlDocuments(text: string): string[] {
  return text.split(/^---[ \t]*(?:#.*)?$/m).filter((doc) => doc.replace(/^\s*#.*$/gm, '').trim() !== '')
}

/** The CRDs in one parsed value: an object, an array of objects, or a `List` with `items`. */
function crdsIn(value: unknown, where: string): CrdShape[] {
  if (value === null || value === undefined) return []
  if (Array.isArray(value)) return value.flatMap((v, i) => crdsIn(v, `${where}[${i}]`))
  const obj = value as CrdShape & { items?: unknown }
  if (typeof obj !== 'object') throw invalid(`${where}: not an object`, 'read CRDs')
  if (typeof obj.kind === 'string' && obj.kind.endsWith('List') && Array.isArray(obj.items))
    return crdsIn(obj.items, `${where}.items`)
  return [checkCrd(obj, where)]
}

/** Throws `EDGEOP_ERR_INVALID` unless `obj` is an apiextensions.k8s.io/v1 CRD with a name. */
export function checkCrd(obj: KubeObject, where: string): CrdShape {
  const crd = obj as CrdShape
  if (crd.apiVersion !== CRD_API_VERSION || crd.kind !== 'CustomResourceDefinition')
    throw invalid(
      `${where}: not a CustomResourceDefinition of ${CRD_API_VERSION} (apiVersion ${JSON.stringify(String(crd.apiVersion)).slice(0, 80)}, kind ${JSON.stringify(String(crd.kind)).slice(0, 80)})`,
      'read CRDs',
    )
  if (typeof crd.metadata?.name !== 'string' || crd.metadata.name === '')
    throw invalid(`${where}: the CustomResourceDefinition has no metadata.name`, 'read CRDs')
  return crd
}

/**
 * Cap of one CRD file: 32 MiB. The apiserver takes at most 3 MiB in one request body, and a file
 * holds a project's CRDs (the largest public ones are a few hundred KiB each).
 */
const MAX_CRD_FILE_BYTES = 32 * 1024 * 1024

async function readFileCrds(file: string): Promise<CrdShape[]> {
  let text: string
  try {
    text = await readBoundedText(file, { what: 'CRD file', maxBytes: MAX_CRD_FILE_BYTES })
  } catch (err) {
    if (isEdgeopError(err)) throw err
    throw new EdgeopError('EDGEOP_ERR_FILE', `cannot read CRD file ${file}`, {
      step: 'read CRDs',
      cause: err,
    })
  }
  if (extname(file) === '.json') {
    try {
      return crdsIn(JSON.parse(text), file)
    } catch (err) {
      if (err instanceof EdgeopError) throw err
      throw new EdgeopError('EDGEOP_ERR_DECODE', `${file}: not valid JSON`, { step: 'read CRDs', cause: err })
    }
  }
  return yamlDocuments(text).flatMap((doc, i, all) =>
    crdsIn(parseYaml(doc, { file: all.length > 1 ? `${file} (document ${i + 1})` : file }), file),
  )
}

/**
 * Reads every source into CRD objects: objects as they are, files by their extension (`.json`, else
 * YAML with any number of `---` documents), directories by their {@link CRD_FILE_EXTENSIONS} files in
 * name order. Rejects with one error naming the file (and document) that is wrong.
 */
export async function readCrds(sources: readonly CrdSource[]): Promise<KubeObject[]> {
  const out: CrdShape[] = []
  for (const [i, source] of sources.entries()) {
    if (typeof source !== 'string') {
      out.push(checkCrd(source, `crds[${i}]`))
      continue
    }
    let isDir: boolean
    try {
      isDir = (await stat(source)).isDirectory()
    } catch (err) {
      throw new EdgeopError('EDGEOP_ERR_FILE', `CRD path ${source} does not exist`, {
        step: 'read CRDs',
        cause: err,
      })
    }
    if (!isDir) {
      out.push(...(await readFileCrds(source)))
      continue
    }
    const names = (await readdir(source)).filter((n) => CRD_FILE_EXTENSIONS.includes(extname(n))).sort()
    for (const name of names) out.push(...(await readFileCrds(join(source, name))))
  }
  return out
}

function conditionTrue(crd: CrdShape, type: string): boolean {
  return (crd.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True')
}

/** Whether discovery of every served version of `crd` lists its plural. */
async function served(client: KubeClient, crd: CrdShape): Promise<boolean> {
  const group = crd.spec?.group
  const plural = crd.spec?.names?.plural
  const versions = (crd.spec?.versions ?? []).filter((v) => v.served !== false && v.name !== undefined)
  for (const v of versions) {
    const list = await client
      .request<{ resources?: { name: string }[] }>({ method: 'GET', path: `/apis/${group}/${v.name}` })
      .catch(() => undefined)
    if (!list?.resources?.some((r) => r.name === plural)) return false
  }
  return true
}

/** Options for {@link installCrds}. */
export interface InstallCrdsOptions {
  /** Default {@link DEFAULT_CRD_INSTALL_TIMEOUT_MS}. */
  timeoutMs?: number
}

/**
 * Applies the CRDs of `sources` (server-side apply, field manager {@link CRD_FIELD_MANAGER}, forced, so
 * installing again updates them) and resolves once every one is established and served. Returns the
 * CRDs as the apiserver stored them. Rejects with `EDGEOP_ERR_TIMEOUT` naming the CRDs not ready.
 */
export async function installCrds(
  client: KubeClient,
  sources: readonly CrdSource[],
  options: InstallCrdsOptions = {},
): Promise<KubeObject[]> {
  const crds = await readCrds(sources)
  const api = client.resource<CrdShape>(CORE_TYPES.customResourceDefinitions)
  for (const crd of crds) await api.apply(crd, { fieldManager: CRD_FIELD_MANAGER, force: true })
  const timeoutMs = options.timeoutMs ?? DEFAULT_CRD_INSTALL_TIMEOUT_MS
  const pending = new Set(crds.map((c) => c.metadata.name!))
  const stored = new Map<string, CrdShape>()
  await eventually(
    async () => {
      for (const name of [...pending]) {
        const crd = await api.get(name)
        if (
          conditionTrue(crd, 'Established') &&
          conditionTrue(crd, 'NamesAccepted') &&
          (await served(client, crd))
        ) {
          stored.set(name, crd)
          pending.delete(name)
        }
      }
      return pending.size === 0
    },
    { timeoutMs, what: () => `CRDs established and served: ${[...pending].join(', ')}` },
  )
  return crds.map((c) => stored.get(c.metadata.name!)!)
}
