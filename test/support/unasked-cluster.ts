/**
 * @module unasked-cluster — a kubeconfig of a cluster that is never asked (port 1 on loopback), for
 * operators whose test ends before the first request; removed after the test file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after } from 'node:test'

/** Writes the kubeconfig into a fresh directory (removed after the file's tests) and returns its path. */
export function unaskedKubeconfig(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'edgeop-unasked-'))
  after(() => rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'kubeconfig')
  writeFileSync(
    file,
    'clusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:1"}\n' +
      'contexts:\n- name: c\n  context: {cluster: c}\ncurrent-context: c\n',
  )
  return file
}
