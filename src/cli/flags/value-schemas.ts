/**
 * @module value-schemas — checks for the values operator flags take: Kubernetes names, URLs, non-empty text.
 *
 * Each is a zod/mini schema for {@link stringFlag}'s `schema`, so a bad value is refused while the
 * command line is parsed (exit 2, before anything starts), with a message that says what was expected.
 */
import * as z from 'zod/mini'
import { isDns1123Label, isDns1123Subdomain } from '../../core/index.ts'

/**
 * A Kubernetes object name. `label` (DNS-1123 label, ≤ 63 characters) for namespaces;
 * `subdomain` (DNS-1123 subdomain, ≤ 253 characters) for most other objects, Leases and Nodes
 * included. `what` names the object in the message, e.g. `a Lease name`.
 *
 * @example
 * stringFlag('Lease name.', { schema: kubeName('subdomain', 'a Lease name') })
 * // --leader-election-id=Bad_ID! → 'expected a Lease name (DNS-1123 subdomain: …), got "Bad_ID!"'
 */
export function kubeName(rule: 'label' | 'subdomain', what: string): z.ZodMiniType<string, string> {
  const message =
    rule === 'label'
      ? `expected ${what} (DNS-1123 label: at most 63 of a-z, 0-9 and "-", starting and ending with a letter or digit)`
      : `expected ${what} (DNS-1123 subdomain: at most 253 of a-z, 0-9, "-" and ".", each dot-separated part starting and ending with a letter or digit)`
  return z.string().check(z.refine(rule === 'label' ? isDns1123Label : isDns1123Subdomain, message))
}

/** An absolute `http:` or `https:` URL (`https://db.example.com:8443/v1`). */
export function httpUrl(): z.ZodMiniType<string, string> {
  return z.string().check(
    z.refine((s) => {
      const url = URL.parse(s)
      return url !== null && (url.protocol === 'http:' || url.protocol === 'https:') && url.host !== ''
    }, 'expected an absolute http:// or https:// URL'),
  )
}

/** Any text but the empty string: for flags whose empty value would mean something surprising. */
export function nonEmpty(): z.ZodMiniType<string, string> {
  return z.string().check(z.minLength(1, 'must not be empty'))
}

/** A container image reference (`ghcr.io/org/name:tag`): not empty, no whitespace or control characters. */
export function imageReference(): z.ZodMiniType<string, string> {
  return z
    .string()
    .check(
      z.minLength(1, 'must not be empty'),
      z.regex(/^[^\s\p{Cc}]*$/u, 'expected an image reference like registry/name:tag (no spaces)'),
    )
}
