/**
 * @module names — Kubernetes object-name rules (DNS-1123 label and subdomain), checked before a name reaches the apiserver.
 *
 * The rules and limits are apimachinery's `pkg/util/validation/validation.go` (`IsDNS1123Label`,
 * `IsDNS1123Subdomain`), which the apiserver applies to namespaces (labels) and to most other
 * object names, Leases and Nodes included (subdomains).
 */

/** Longest DNS-1123 label: 63 characters (RFC 1123; apimachinery `DNS1123LabelMaxLength`). */
export const DNS1123_LABEL_MAX_LENGTH = 63
/** Longest DNS-1123 subdomain: 253 characters (RFC 1123; apimachinery `DNS1123SubdomainMaxLength`). */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253

const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?'
const LABEL_RE = new RegExp(`^${LABEL}$`)
const SUBDOMAIN_RE = new RegExp(`^${LABEL}(\\.${LABEL})*$`)

/**
 * True when `name` is a DNS-1123 label: 1–63 characters of `a-z`, `0-9` and `-`, starting and ending
 * with a letter or digit. Namespace names must be labels.
 *
 * @example
 * isDns1123Label('kube-system') // true
 * isDns1123Label('Bad_NS')      // false
 */
export function isDns1123Label(name: string): boolean {
  return name.length <= DNS1123_LABEL_MAX_LENGTH && LABEL_RE.test(name)
}

/**
 * True when `name` is a DNS-1123 subdomain: 1–253 characters, dot-separated labels (each starting
 * and ending with a letter or digit, so no `..`, `.-` or `-.`). Lease and Node names must be subdomains.
 *
 * @example
 * isDns1123Subdomain('edgeop.example.com') // true
 * isDns1123Subdomain('Bad_ID!')            // false
 */
export function isDns1123Subdomain(name: string): boolean {
  return name.length <= DNS1123_SUBDOMAIN_MAX_LENGTH && SUBDOMAIN_RE.test(name)
}
