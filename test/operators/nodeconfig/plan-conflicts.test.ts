/**
 * Conflict planning at scale (D12): claims are indexed by path once, so many NodeConfigs on the same
 * paths cost work and problems linear in NodeConfigs × paths; and on small states, where no path has
 * more claimants than a message names, the plan is the one the quadratic planner made, with its
 * one message per pair joined into one per path.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { NodeConfig } from '../../../src/operators/nodeconfig/api.ts'
import { type OwnershipRecord, sha256 } from '../../../src/operators/nodeconfig/file-store.ts'
import {
  type ConfigPlan,
  MAX_NAMED_CLAIMANTS,
  type NodePlan,
  planNode,
  type Removal,
  validateConfig,
} from '../../../src/operators/nodeconfig/plan.ts'
import { seededRandom } from '../../support/random.ts'

function nc(name: string, paths: string[]): NodeConfig {
  return {
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name, uid: `uid-${name}`, generation: 1 },
    spec: { files: paths.map((path) => ({ path, content: name, mode: '0644' })) },
  }
}
const owned = (name: string) => ({ uid: `uid-${name}`, name, sha256: sha256(name), mode: '0644' })

/** Counts every read of `metadata` or `spec` on the NodeConfigs: the planner's work per NodeConfig. */
function counted(configs: NodeConfig[]): { configs: NodeConfig[]; reads: () => number } {
  let reads = 0
  const wrap = (c: NodeConfig): NodeConfig =>
    new Proxy(c, {
      get(target, key, receiver) {
        if (key === 'metadata' || key === 'spec') reads++
        return Reflect.get(target, key, receiver)
      },
    })
  return { configs: configs.map(wrap), reads: () => reads }
}

test('D12: 100 NodeConfigs claiming the same 64 paths plan in work and problems linear in them, all blocked, nothing removed', () => {
  const N = 100
  const P = 64
  const paths = Array.from({ length: P }, (_, i) => `etc/app/file-${String(i).padStart(2, '0')}.conf`)
  const names = Array.from({ length: N }, (_, i) => `nc-${String(i).padStart(3, '0')}`)
  const record: OwnershipRecord = {
    version: 1,
    files: Object.fromEntries(paths.map((p) => [p, owned('nc-000')])),
  }
  const c = counted(names.map((n) => nc(n, paths)))
  const plan = planNode(c.configs, {}, record)

  // The quadratic planner read a NodeConfig's name once per pair and path: 100 × 99 × 64 = 633,600 reads.
  assert.ok(c.reads() <= 40 * N, `${c.reads()} reads of metadata/spec for ${N} NodeConfigs`)
  assert.deepEqual(
    plan.configs.map((p) => p.config.metadata.name),
    names,
  )
  for (const p of plan.configs) {
    assert.deepEqual(p.files, [], `${p.config.metadata.name}: nothing written`)
    assert.equal(p.problems.length, P, `${p.config.metadata.name}: one problem per path, not one per pair`)
  }
  const [first, last] = [plan.configs[0]!, plan.configs.at(-1)!]
  assert.equal(
    first.problems[0],
    `"${paths[0]}" is also claimed by NodeConfigs "nc-001", "nc-002", "nc-003" and ${N - 1 - MAX_NAMED_CLAIMANTS} more`,
  )
  assert.equal(
    last.problems[0],
    `"${paths[0]}" is also claimed by NodeConfigs "nc-000", "nc-001", "nc-002" and ${N - 1 - MAX_NAMED_CLAIMANTS} more`,
  )
  const chars = plan.configs.reduce((n, p) => n + p.problems.join('').length, 0)
  assert.ok(chars < 100 * N * P, `${chars} characters of problems`)
  assert.deepEqual(plan.removals, [], 'a blocked owner keeps its files')
})

test('D12: problems and work grow linearly with the NodeConfigs on one path (50 → 200)', () => {
  const measure = (n: number) => {
    const c = counted(Array.from({ length: n }, (_, i) => nc(`nc-${i}`, ['a', 'a/b', 'a/b/c'])))
    const plan = planNode(c.configs, {}, { version: 1, files: {} })
    return { reads: c.reads(), problems: plan.configs.reduce((k, p) => k + p.problems.length, 0) }
  }
  const small = measure(50)
  const large = measure(200)
  assert.ok(large.problems <= 4 * small.problems, `${small.problems} → ${large.problems} problems`)
  assert.ok(large.reads <= 6 * small.reads, `${small.reads} → ${large.reads} reads`)
})

/** The planner as it was before D12 (every pair of claimants compared, messages per pair): the oracle. */
function quadraticPlan(configs: readonly NodeConfig[], record: OwnershipRecord): NodePlan {
  // The tests' NodeConfigs are valid and selected: every listed path is claimed.
  const plans: ConfigPlan[] = [...configs]
    .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1))
    .map((config) => ({ config, ...validateConfig(config) }))
  const listed = new Map(plans.map((p) => [p, new Set(p.config.spec!.files!.map((f) => f.path))]))
  const claims = new Map<string, ConfigPlan[]>()
  for (const [p, paths] of listed)
    for (const path of paths) claims.set(path, [...(claims.get(path) ?? []), p])
  const blocked = new Map<ConfigPlan, string[]>()
  const block = (p: ConfigPlan, why: string): void => void blocked.set(p, [...(blocked.get(p) ?? []), why])
  const nameOf = (p: ConfigPlan): string => JSON.stringify(p.config.metadata.name)
  for (const [path, owners] of claims) {
    for (const a of owners)
      for (const b of owners)
        if (a !== b) block(a, `${JSON.stringify(path)} is also claimed by NodeConfig ${nameOf(b)}`)
    const segments = path.split('/')
    for (let i = 1; i < segments.length; i++) {
      const parent = segments.slice(0, i).join('/')
      for (const a of claims.get(parent) ?? [])
        for (const b of owners) {
          const by = a === b ? 'the same NodeConfig' : `NodeConfig ${nameOf(b)}`
          block(a, `${JSON.stringify(parent)} is a directory of ${JSON.stringify(path)} claimed by ${by}`)
          if (a !== b)
            block(
              b,
              `${JSON.stringify(path)} needs ${JSON.stringify(parent)}, a file of NodeConfig ${nameOf(a)}`,
            )
        }
    }
  }
  for (const [p, why] of blocked) {
    p.problems.push(...new Set(why))
    p.files = []
  }
  const writers = new Set(plans.flatMap((p) => p.files.map((f) => f.path)))
  const removals: Removal[] = []
  for (const [path, owner] of Object.entries(record.files)) {
    const stillOwned = plans.some((p) => p.config.metadata.uid === owner.uid && listed.get(p)?.has(path))
    if (!stillOwned && !writers.has(path)) removals.push({ path, owner })
  }
  return { configs: plans, removals }
}

/** `… by NodeConfigs "b", "c" and "d"` as the quadratic planner said it: one message per other NodeConfig. */
function perPair(problem: string): string[] {
  const m = /^(.* )NodeConfigs ((?:"[^"]*", )*"[^"]*") and ("[^"]*")$/.exec(problem)
  if (!m) return [problem]
  return [...m[2]!.split(', '), m[3]!].map((name) => `${m[1]}NodeConfig ${name}`)
}

const shape = (plan: NodePlan) => ({
  configs: plan.configs.map((p) => ({
    name: p.config.metadata.name,
    files: p.files.map((f) => f.path),
    problems: p.problems.flatMap(perPair).sort(),
  })),
  removals: plan.removals,
})

test('D12: on 2,000 random small node states (at most 4 claimants a path) the plan is the quadratic planner’s, its per-pair messages joined per path', () => {
  const random = seededRandom(12)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!
  const PATHS = ['a', 'a/b', 'a/b/c', 'a/c', 'b', 'b/a', 'c', 'a/b/c/d']
  const NAMES = ['p', 'q', 'r', 's']
  for (let trial = 0; trial < 2000; trial++) {
    const n = 1 + Math.floor(random() * NAMES.length)
    const configs = NAMES.slice(0, n).map((name) =>
      nc(
        name,
        Array.from({ length: Math.floor(random() * 4) }, () => pick(PATHS)),
      ),
    )
    const record: OwnershipRecord = {
      version: 1,
      files: Object.fromEntries(
        Array.from({ length: Math.floor(random() * 3) }, () => [pick(PATHS), owned(pick(NAMES))]),
      ),
    }
    assert.ok(MAX_NAMED_CLAIMANTS >= NAMES.length - 1)
    assert.deepEqual(
      shape(planNode(configs, {}, record)),
      shape(quadraticPlan(configs, record)),
      `trial ${trial}: ${JSON.stringify(configs.map((c) => [c.metadata.name, c.spec?.files?.map((f) => f.path)]))}`,
    )
  }
})
