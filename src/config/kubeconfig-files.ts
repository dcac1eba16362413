/**
 * @module kubeconfig-files — reading kubeconfig files and merging several the way kubectl does.
 */
import path from 'node:path'
import { EdgeopError, isEdgeopError } from '../core/errors.ts'
import { quoteInput } from '../core/quote-input.ts'
import {
  decodeKubeconfig,
  type KubeconfigCluster,
  type KubeconfigContext,
  type KubeconfigUser,
} from './kubeconfig-schema.ts'
import { isBlankKubeconfig, readKubeconfigText } from './kubeconfig-text.ts'
import type { ReadTextFile } from './read-text-file.ts'
import { parseYaml } from './yaml/yaml.ts'

/** A named entry of a kubeconfig and the file that defined it. */
export interface Named<T> {
  /** The entry's `name`; `''` when missing. Unique within its file. */
  name: string
  /** Absolute path of the kubeconfig file the entry comes from. */
  file: string
  /** The entry's body (`cluster`, `user` or `context`); `{}` when missing or null. */
  value: T
}

/** One kubeconfig file, validated, with relative paths resolved against the file's directory. */
export interface KubeconfigFile {
  /** Absolute path of the file. */
  file: string
  /** True when the file holds nothing but blanks and comments. */
  empty: boolean
  /** `current-context`; undefined when unset or empty. */
  currentContext: string | undefined
  /** `clusters` in file order; `certificate-authority` already absolute. */
  clusters: Named<KubeconfigCluster>[]
  /** `users` in file order; file paths (and an exec `command` with a path separator) already absolute. */
  users: Named<KubeconfigUser>[]
  /** `contexts` in file order. */
  contexts: Named<KubeconfigContext>[]
}

/** Several kubeconfig files merged: for each name, the entry of the first file that defines it. */
export interface KubeconfigSet {
  /** The files that were read, in precedence order. */
  files: string[]
  /** The first non-empty `current-context`, and its file. */
  currentContext: { name: string; file: string } | undefined
  /** Cluster name → the entry of the first file that defines it. */
  clusters: Map<string, Named<KubeconfigCluster>>
  /** User name → the entry of the first file that defines it. */
  users: Map<string, Named<KubeconfigUser>>
  /** Context name → the entry of the first file that defines it. */
  contexts: Map<string, Named<KubeconfigContext>>
}

/** Strict standard base64 (Go `encoding/base64.StdEncoding`, which also skips CR and LF). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** Decodes a `*-data` field the way client-go does (strict padded base64) into text; undefined when invalid. */
export function decodeBase64(data: string): string | undefined {
  const compact = data.replace(/[\r\n]/g, '')
  return BASE64.test(compact) ? Buffer.from(compact, 'base64').toString('utf8') : undefined
}

function configError(message: string, cause?: unknown): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_CONFIG', message, { step: 'load kubeconfig', cause })
}

/**
 * Parses and validates the text of one kubeconfig file. Every `*-data` field of every
 * entry must be valid base64 (client-go decodes them all when it loads a file), and a
 * name may appear only once per list (client-go refuses duplicates). Relative
 * `certificate-authority`, `client-certificate`, `client-key`, `tokenFile` and exec
 * `command` paths (the latter only when it contains a path separator) become absolute
 * against the file's directory, as client-go `ResolveLocalPaths` does.
 *
 * @throws EdgeopError `EDGEOP_ERR_YAML` or `EDGEOP_ERR_CONFIG`, naming the file and field.
 */
export function parseKubeconfig(text: string, file: string): KubeconfigFile {
  const decoded = decodeKubeconfig(parseYaml(text, { file }) ?? {})
  if (!decoded.ok) throw configError(`${file}: ${decoded.message}`)
  const doc = decoded.value
  const dir = path.dirname(file)
  const abs = (p: string | null | undefined): string | undefined => (p ? path.resolve(dir, p) : undefined)
  const checkData = (kind: string, name: string, field: string, value: string | null | undefined): void => {
    if (value && decodeBase64(value) === undefined) {
      throw configError(`${file}: ${field} of ${kind} ${quoteInput(name)} is not valid base64`)
    }
  }
  const clusters = named(file, 'clusters', doc.clusters, (e) => e.cluster).map((entry) => {
    const c = entry.value
    checkData('cluster', entry.name, 'certificate-authority-data', c['certificate-authority-data'])
    return { ...entry, value: { ...c, 'certificate-authority': abs(c['certificate-authority']) } }
  })
  const users = named(file, 'users', doc.users, (e) => e.user).map((entry) => {
    const u = entry.value
    checkData('user', entry.name, 'client-certificate-data', u['client-certificate-data'])
    checkData('user', entry.name, 'client-key-data', u['client-key-data'])
    const command = u.exec?.command
    const exec =
      u.exec && command?.includes(path.sep) ? { ...u.exec, command: path.resolve(dir, command) } : u.exec
    const resolved = {
      ...u,
      'client-certificate': abs(u['client-certificate']),
      'client-key': abs(u['client-key']),
      tokenFile: abs(u.tokenFile),
      exec,
    }
    return { ...entry, value: resolved }
  })
  const contexts = named(file, 'contexts', doc.contexts, (e) => e.context)
  const empty = isBlankKubeconfig(text)
  return { file, empty, currentContext: doc['current-context'] || undefined, clusters, users, contexts }
}

function named<E extends { name?: string | null | undefined }, T extends object>(
  file: string,
  list: string,
  entries: (E | null)[] | null | undefined,
  body: (entry: E) => T | null | undefined,
): Named<T>[] {
  const seen = new Map<string, number>()
  return (entries ?? []).map((entry, i) => {
    const name = entry?.name ?? ''
    const first = seen.get(name)
    if (first !== undefined)
      throw configError(
        `${file}: ${list}[${i}]: the name ${quoteInput(name)} is already used by ${list}[${first}]`,
      )
    seen.set(name, i)
    return { name, file, value: (entry && body(entry)) ?? ({} as T) }
  })
}

/**
 * Reads kubeconfig files in precedence order. Paths are made absolute; empty and repeated
 * paths are skipped. With `missingOk` (the `KUBECONFIG` list) a file that does not exist
 * is skipped, as kubectl does; otherwise it is an error. Each file is read bounded
 * (`MAX_KUBECONFIG_BYTES`): a larger one is an error naming it and the cap.
 */
export async function readKubeconfigFiles(
  paths: readonly string[],
  options: { missingOk?: boolean; readFile?: ReadTextFile } = {},
): Promise<KubeconfigFile[]> {
  const seen = new Set<string>()
  const files: KubeconfigFile[] = []
  for (const p of paths) {
    if (!p) continue
    const file = path.resolve(p)
    if (seen.has(file)) continue
    seen.add(file)
    let text: string
    try {
      text = await readKubeconfigText(file, options.readFile)
    } catch (err) {
      if (isEdgeopError(err)) throw err
      const code = (err as { code?: unknown }).code
      if (code === 'ENOENT' && options.missingOk) continue
      throw configError(
        code === 'ENOENT'
          ? `kubeconfig ${file} does not exist`
          : `cannot read kubeconfig ${file}: ${String(code ?? err)}`,
        err,
      )
    }
    files.push(parseKubeconfig(text, file))
  }
  return files
}

/**
 * Merges files as kubectl merges the `KUBECONFIG` list: the first file to define a named
 * cluster, user or context wins (entries are never combined field by field), and the
 * first non-empty `current-context` wins.
 */
export function mergeKubeconfigs(files: readonly KubeconfigFile[]): KubeconfigSet {
  const set: KubeconfigSet = {
    files: files.map((f) => f.file),
    currentContext: undefined,
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
  }
  for (const f of files) {
    if (!set.currentContext && f.currentContext) set.currentContext = { name: f.currentContext, file: f.file }
    for (const e of f.clusters) if (!set.clusters.has(e.name)) set.clusters.set(e.name, e)
    for (const e of f.users) if (!set.users.has(e.name)) set.users.set(e.name, e)
    for (const e of f.contexts) if (!set.contexts.has(e.name)) set.contexts.set(e.name, e)
  }
  return set
}
