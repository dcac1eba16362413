import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { toYaml } from '../../src/config/yaml/emit.ts'
import { readCrds, yamlDocuments } from '../../src/testing/crds.ts'

const crd = (name: string) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name },
  spec: { group: 'example.com', names: { plural: name.split('.')[0] } },
})

let dir: string
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgeop-crds-test-'))
})
after(async () => {
  await rm(dir, { recursive: true, force: true })
})

test('YAML documents split on --- lines; empty and comment-only documents are left out', () => {
  assert.deepEqual(yamlDocuments('---\na: 1\n---\n# only a comment\n---   \nb: 2\n--- # end\n'), [
    '\na: 1\n',
    '\nb: 2\n',
  ])
})

test('objects, multi-document YAML, JSON lists and directories (name order, other files ignored)', async () => {
  await writeFile(
    join(dir, 'multi.yaml'),
    `${toYaml(crd('as.example.com'))}---\n${toYaml(crd('bs.example.com'))}`,
  )
  const sub = join(dir, 'crd-dir')
  await mkdir(sub)
  await writeFile(join(sub, 'b.json'), JSON.stringify({ kind: 'List', items: [crd('ds.example.com')] }))
  await writeFile(join(sub, 'a.yml'), toYaml(crd('cs.example.com')))
  await writeFile(join(sub, 'README.md'), 'not a CRD')
  const names = (await readCrds([crd('zs.example.com'), join(dir, 'multi.yaml'), sub])).map(
    (c) => c.metadata.name,
  )
  assert.deepEqual(names, [
    'zs.example.com',
    'as.example.com',
    'bs.example.com',
    'cs.example.com',
    'ds.example.com',
  ])
})

test('one error naming the source that is wrong', async () => {
  await writeFile(join(dir, 'deploy.yaml'), 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n')
  await writeFile(join(dir, 'broken.json'), '{')
  await writeFile(join(dir, 'nameless.yaml'), toYaml({ ...crd('x'), metadata: {} }))
  const cases: [unknown[], string, RegExp][] = [
    [[join(dir, 'missing.yaml')], 'EDGEOP_ERR_FILE', /CRD path .*missing\.yaml does not exist/],
    // D4: read bounded, never whole.
    [['/dev/zero'], 'EDGEOP_ERR_FILE', /^CRD file \/dev\/zero is larger than the 32 MiB edgeop reads$/],
    [
      [join(dir, 'deploy.yaml')],
      'EDGEOP_ERR_INVALID',
      /deploy\.yaml: not a CustomResourceDefinition .*kind "Deployment"/,
    ],
    [[join(dir, 'broken.json')], 'EDGEOP_ERR_DECODE', /broken\.json: not valid JSON/],
    [
      [join(dir, 'nameless.yaml')],
      'EDGEOP_ERR_INVALID',
      /nameless\.yaml: the CustomResourceDefinition has no metadata\.name/,
    ],
    [
      [crd('ok.example.com'), { kind: 'ConfigMap' }],
      'EDGEOP_ERR_INVALID',
      /crds\[1\]: not a CustomResourceDefinition/,
    ],
  ]
  for (const [sources, code, message] of cases)
    await assert.rejects(readCrds(sources as never), (err: Error & { code?: string }) => {
      assert.equal(err.code, code, String(sources[0]))
      assert.match(err.message, message)
      return true
    })
})
