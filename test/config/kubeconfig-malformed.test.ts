import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { test } from 'node:test'
import { loadKubeconfig } from '../../src/config/kubeconfig.ts'
import { isEdgeopError } from '../../src/core/errors.ts'
import { fixture } from './support/helpers.ts'

/** Each malformed fixture and the exact error it must produce (`F` is the fixture's absolute path). */
const EXPECTED: Record<string, [code: string, message: (F: string) => string]> = {
  'bad-indentation.yaml': [
    'EDGEOP_ERR_YAML',
    (F) => `${F}:10:4: bad indentation: expected a sequence entry at column 3, found column 4`,
  ],
  'tab-indentation.yaml': [
    'EDGEOP_ERR_YAML',
    (F) => `${F}:9:1: tab character used for indentation (YAML allows only spaces)`,
  ],
  'conflicting-duplicate-key.yaml': [
    'EDGEOP_ERR_YAML',
    (F) => `${F}:6:5: key "server" appears twice with different values (lines 5 and 6)`,
  ],
  'users-is-a-string.yaml': ['EDGEOP_ERR_CONFIG', (F) => `${F}: users: expected a list, got a string`],
  'truncated-line.yaml': [
    'EDGEOP_ERR_YAML',
    (F) => `${F}:11:1: expected a mapping key ("key: value") but found no ":" on this line`,
  ],
  'unterminated-quote.yaml': [
    'EDGEOP_ERR_YAML',
    (F) =>
      `${F}:6:12: a quoted string continues on a line that is not indented enough (is a closing quote missing?)`,
  ],
  'two-documents.yaml': ['EDGEOP_ERR_YAML', (F) => `${F}:3:1: multiple YAML documents are not supported`],
  'yaml-tag.yaml': ['EDGEOP_ERR_YAML', (F) => `${F}:5:22: YAML tags (!tag) are not supported`],
  'merge-key.yaml': ['EDGEOP_ERR_YAML', (F) => `${F}:7:5: merge keys ("<<") are not supported`],
  'complex-key.yaml': ['EDGEOP_ERR_YAML', (F) => `${F}:2:1: complex mapping keys ("? ") are not supported`],
  'unterminated-flow.yaml': [
    'EDGEOP_ERR_YAML',
    (F) =>
      `${F}:7:13: a flow collection continues on a line that is not indented enough (is a closing bracket missing?)`,
  ],
  'insecure-is-quoted.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) =>
      `${F}: clusters[0].cluster.insecure-skip-tls-verify (cluster "a"): expected a boolean (true or false), got a string`,
  ],
  'exec-args-not-a-list.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) => `${F}: users[0].user.exec.args (user "helper-user"): expected a list, got a string`,
  ],
  'duplicate-cluster-name.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) => `${F}: clusters[1]: the name "twin" is already used by clusters[0]`,
  ],
  'bad-base64.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) => `${F}: client-key-data of user "broken-key" is not valid base64`,
  ],
  'cert-without-key.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) => `user "half" in ${F} has a client certificate but no client key; set both or neither`,
  ],
  'ca-file-and-data.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) =>
      `cluster "both-ca" in ${F} sets both certificate-authority and certificate-authority-data; keep one`,
  ],
  'no-current-context.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) =>
      `current-context is not set in ${F}; choose a context with the "context" option or "kubectl config use-context <name>" (contexts: "first", "second")`,
  ],
  'context-not-found.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) => `context "admin@gone.example.org" not found in ${F} (contexts: "present")`,
  ],
  'user-not-found.yaml': ['EDGEOP_ERR_CONFIG', (F) => `user "ghost" (context "a" in ${F}) not found in ${F}`],
  'cluster-not-found.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) => `cluster "nowhere" (context "a" in ${F}) not found in ${F}`,
  ],
  'server-missing.yaml': ['EDGEOP_ERR_CONFIG', (F) => `cluster "empty" in ${F} has no server`],
  'server-unbracketed-ipv6.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) =>
      `cluster "v6" in ${F}: server is not a valid URL (an IPv6 address must be in brackets, e.g. https://[::1]:6443)`,
  ],
  'token-and-basic.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) =>
      `user "both" in ${F} sets more than one authentication method (token and username/password); only one is allowed`,
  ],
  'auth-provider.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) =>
      `user "oidc" in ${F} uses auth-provider "oidc", which edgeop does not support; use an exec plugin (for example kubelogin) instead`,
  ],
  'exec-v1alpha1.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) =>
      `user "old-exec": exec plugin "aws-iam-authenticator" uses apiVersion "client.authentication.k8s.io/v1alpha1", which is not supported (use client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1) (kubeconfig ${F}, context "a")`,
  ],
  'exec-v1-without-interactive-mode.yaml': [
    'EDGEOP_ERR_CONFIG',
    (F) =>
      `user "v1-exec": interactiveMode must be specified to use exec plugin "helper" with apiVersion client.authentication.k8s.io/v1 (kubeconfig ${F}, context "a")`,
  ],
}

test('every malformed fixture has an expected error', () => {
  const files = readdirSync(fixture('malformed')).sort()
  assert.deepEqual(files, Object.keys(EXPECTED).sort())
  assert.ok(files.length >= 12)
})

for (const [name, [code, message]] of Object.entries(EXPECTED)) {
  test(`malformed: ${name}`, async () => {
    const file = fixture('malformed', name)
    await assert.rejects(loadKubeconfig({ paths: [file], env: {} }), (err: unknown) => {
      assert.ok(isEdgeopError(err), String(err))
      assert.equal(err.message, message(file))
      assert.equal(err.code, code)
      return true
    })
  })
}
