/**
 * @module plan — pure: from the NodeConfigs, this node's labels and the ownership record to what the agent must do.
 *
 * Level-based: the plan depends only on the current state, never on which event woke the
 * agent, so a restarted agent that missed deletions and relabels still removes exactly
 * the files nobody claims any more.
 */
import { validateAgainst } from '../../objects/index.ts'
import { MAX_CONTENT_BYTES, MAX_FILES, MODE_PATTERN, type NodeConfig, NodeConfigSpec } from './api.ts'
import { type OwnedFile, type OwnershipRecord, sha256 } from './file-store.ts'
import { checkRelativePath } from './paths.ts'

/** The owner must be able to read a file back, or drift could not be detected. */
const OWNER_READ = 0o400

/**
 * Most NodeConfigs a conflict message names; the rest are counted ("and 96 more"). A status
 * message is capped anyway (`MAX_MESSAGE_LENGTH`), and naming every other claimant in every
 * claimant's message made planning quadratic in the NodeConfigs sharing a path.
 */
export const MAX_NAMED_CLAIMANTS = 3

/** One file as it must be on disk. */
export interface DesiredFile {
  path: string
  content: string
  /** Permission bits. */
  mode: number
  /** sha256 (hex) of the UTF-8 content. */
  sha256: string
}

/** What to do for one NodeConfig that applies to this node. */
export interface ConfigPlan {
  config: NodeConfig
  /**
   * Files to put in place. Empty whenever `problems` is not: a NodeConfig with an
   * invalid file or a conflicting path changes nothing on this node (its files already
   * in place stay as they are), so a node never holds half of a NodeConfig's new spec.
   */
  files: DesiredFile[]
  /** Why the NodeConfig cannot be applied (validation, conflicts); empty when it can. */
  problems: string[]
}

/** A recorded file to delete. */
export interface Removal {
  path: string
  owner: OwnedFile
}

/** The whole plan for this node. */
export interface NodePlan {
  /** NodeConfigs selecting this node, by name. */
  configs: ConfigPlan[]
  /** Recorded files whose owner no longer claims them and that no one else will overwrite. */
  removals: Removal[]
}

/** True when every `selector` label equals the node's (empty or absent: every node). */
export function selects(
  selector: Readonly<Record<string, string>> | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v)
}

/** True when `config` applies to a node with `labels` (selected and not being deleted). */
export function applies(config: NodeConfig, labels: Readonly<Record<string, string>> | undefined): boolean {
  return !config.metadata.deletionTimestamp && selects(config.spec?.nodeSelector, labels)
}

/**
 * Validates one NodeConfig as the agent must (the CRD's schema may be older or looser):
 * every path through {@link checkRelativePath}, content bytes against
 * {@link MAX_CONTENT_BYTES}, modes as permission bits the owner can read.
 */
export function validateConfig(config: NodeConfig): { files: DesiredFile[]; problems: string[] } {
  const problems: string[] = []
  const spec = (config.spec ?? {}) as { files?: unknown; nodeSelector?: unknown }
  const list = spec.files ?? []
  if (!Array.isArray(list)) return { files: [], problems: ['spec.files must be a list'] }
  if (list.length > MAX_FILES) problems.push(`spec.files has ${list.length} entries; at most ${MAX_FILES}`)
  const files: DesiredFile[] = []
  const seen = new Set<string>()
  for (const entry of list as { path?: unknown; content?: unknown; mode?: unknown }[]) {
    const path = typeof entry?.path === 'string' ? entry.path : ''
    const where = JSON.stringify(path)
    const checked = checkRelativePath(path)
    if (!checked.ok) {
      problems.push(`${where}: ${checked.reason}`)
      continue
    }
    if (seen.has(path)) problems.push(`${where}: listed twice`)
    seen.add(path)
    if (typeof entry.content !== 'string') {
      problems.push(`${where}: content must be a string`)
      continue
    }
    const bytes = Buffer.byteLength(entry.content)
    if (bytes > MAX_CONTENT_BYTES)
      problems.push(`${where}: content is ${bytes} bytes, over the ${MAX_CONTENT_BYTES}-byte cap`)
    const modeText = entry.mode ?? '0644'
    if (typeof modeText !== 'string' || !MODE_PATTERN.test(modeText)) {
      problems.push(`${where}: mode ${JSON.stringify(modeText)} is not octal permission bits such as "0644"`)
      continue
    }
    const mode = Number.parseInt(modeText, 8)
    if ((mode & OWNER_READ) === 0)
      problems.push(`${where}: mode ${modeText} must let the owner read the file (0400)`)
    files.push({ path, content: entry.content, mode, sha256: sha256(entry.content) })
  }
  if (problems.length === 0) {
    const parsed = validateAgainst(NodeConfigSpec, config.spec ?? {}, 'spec')
    if (!parsed.ok) problems.push(...parsed.problems)
  }
  return problems.length === 0 ? { files, problems } : { files: [], problems }
}

/**
 * Plans this node: which NodeConfigs apply, their files, their conflicts, and which
 * recorded files to remove.
 *
 * Conflicts: a path claimed by two applying NodeConfigs, or a path that another claimed
 * path needs as a directory, blocks every NodeConfig involved, each with one problem per
 * conflicting path naming the others ({@link MAX_NAMED_CLAIMANTS} by name, the rest
 * counted); the file already on disk keeps its recorded owner. Claims are indexed by path
 * once, so the work is linear in claims × path depth, whatever the NodeConfigs sharing a path. A recorded file is kept while its
 * owner (by UID) applies and still lists the path — even if that owner is blocked — and
 * is otherwise removed, unless another NodeConfig is about to overwrite it.
 */
export function planNode(
  configs: readonly NodeConfig[],
  labels: Readonly<Record<string, string>> | undefined,
  record: OwnershipRecord,
): NodePlan {
  const plans: ConfigPlan[] = configs
    .filter((c) => applies(c, labels))
    .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1))
    .map((config) => ({ config, ...validateConfig(config) }))

  // Every well-formed path each applying NodeConfig claims, valid or not, indexed once by path.
  const claims = new Map<string, ConfigPlan[]>()
  const listed = new Map<ConfigPlan, Set<string>>()
  for (const p of plans) {
    const paths = new Set(
      ((p.config.spec?.files ?? []) as { path?: unknown }[])
        .map((f) => f?.path)
        .filter((x): x is string => typeof x === 'string' && checkRelativePath(x).ok),
    )
    listed.set(p, paths)
    for (const path of paths) {
      const owners = claims.get(path)
      if (owners) owners.push(p)
      else claims.set(path, [p])
    }
  }
  const blocked = new Map<ConfigPlan, Set<string>>()
  const block = (p: ConfigPlan, why: string): void => {
    const set = blocked.get(p)
    if (set) set.add(why)
    else blocked.set(p, new Set([why]))
  }
  const names = new Map(plans.map((p) => [p, JSON.stringify(p.config.metadata.name)]))
  // Per path, each claimant gets one problem naming the others (at most MAX_NAMED_CLAIMANTS of
  // them): work and problems grow with claimants × paths, not with pairs of claimants.
  const claimsPath = (p: ConfigPlan, path: string): boolean => listed.get(p)!.has(path)
  for (const [path, owners] of claims) {
    const quoted = JSON.stringify(path)
    if (owners.length > 1)
      for (const a of owners) block(a, `${quoted} is also claimed by ${claimants(owners, a, true, names)}`)
    const segments = path.split('/')
    for (let i = 1; i < segments.length; i++) {
      const parent = segments.slice(0, i).join('/')
      const files = claims.get(parent)
      if (!files) continue
      const dir = JSON.stringify(parent)
      for (const a of files) {
        const own = claimsPath(a, path)
        if (own) block(a, `${dir} is a directory of ${quoted} claimed by the same NodeConfig`)
        if (owners.length > (own ? 1 : 0))
          block(a, `${dir} is a directory of ${quoted} claimed by ${claimants(owners, a, own, names)}`)
      }
      for (const b of owners) {
        const own = claimsPath(b, parent)
        if (files.length > (own ? 1 : 0))
          block(b, `${quoted} needs ${dir}, a file of ${claimants(files, b, own, names)}`)
      }
    }
  }
  for (const [p, why] of blocked) {
    p.problems.push(...why)
    p.files = []
  }

  const writers = new Set(plans.flatMap((p) => p.files.map((f) => f.path)))
  const removals: Removal[] = []
  const byUid = new Map<string | undefined, ConfigPlan[]>()
  for (const p of plans) byUid.set(p.config.metadata.uid, [...(byUid.get(p.config.metadata.uid) ?? []), p])
  for (const [path, owner] of Object.entries(record.files)) {
    const stillOwned = byUid.get(owner.uid)?.some((p) => listed.get(p)?.has(path)) ?? false
    if (!stillOwned && !writers.has(path)) removals.push({ path, owner })
  }
  return { configs: plans, removals }
}

/**
 * The claimants in `owners` other than `self` (`isOwner`: whether `self` is among them), for a
 * message: `NodeConfig "b"`, `NodeConfigs "b", "c" and "d"`, or `NodeConfigs "b", "c", "d" and
 * 96 more` past {@link MAX_NAMED_CLAIMANTS}. Reads at most that many plus one of `owners`.
 */
function claimants(
  owners: readonly ConfigPlan[],
  self: ConfigPlan,
  isOwner: boolean,
  names: ReadonlyMap<ConfigPlan, string>,
): string {
  const others = owners.length - (isOwner ? 1 : 0)
  const shown: string[] = []
  for (const o of owners) {
    if (shown.length === MAX_NAMED_CLAIMANTS) break
    if (o !== self) shown.push(names.get(o)!)
  }
  if (others === 1) return `NodeConfig ${shown[0]}`
  const more = others - shown.length
  return more > 0
    ? `NodeConfigs ${shown.join(', ')} and ${more} more`
    : `NodeConfigs ${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`
}
