/**
 * @module yaml/emit — JSON values as block-style YAML (for manifests printed by the CLI).
 *
 * Strings are written plain when that reads back as the same string under YAML 1.1
 * and 1.2 (what kubectl and our parser use), and as JSON double-quoted strings
 * otherwise, so the output always parses back to the input.
 */

/** Plain scalars that a YAML 1.1 or 1.2 parser would read as something other than a string. */
const AMBIGUOUS =
  /^(?:[-+]?(?:\d[\d_]*(?:\.\d*)?(?:e[-+]?\d+)?|\.\d+|0x[\da-f]+|0o?[0-7]+|0b[01]+|\.inf|\.nan)|~|null|true|false|yes|no|on|off|y|n)$/i
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters must be quoted (YAML forbids them in plain scalars).
const NEEDS_QUOTES = /^[\s\-?:,[\]{}#&*!|>'"%@`]|[\s]$|: |\s#|[\u0000-\u001f\u007f]|^$/

/** Serialises a JSON value as YAML (2-space indent, sequences not indented under keys). */
export function toYaml(value: unknown): string {
  return `${emit(value, 0)}\n`.replace(/^\n/, '')
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  const s = String(v)
  return AMBIGUOUS.test(s) || NEEDS_QUOTES.test(s) ? JSON.stringify(s) : s
}

function isBlock(v: unknown): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    (Array.isArray(v)
      ? v.length > 0
      : Object.keys(v).some((k) => (v as Record<string, unknown>)[k] !== undefined))
  )
}

function emit(v: unknown, indent: number): string {
  const pad = ' '.repeat(indent)
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]'
    return v
      .map((item) => {
        if (!isBlock(item)) return `${pad}- ${inline(item)}`
        const body = emit(item, indent + 2)
        return `${pad}- ${body.slice(indent + 2)}`
      })
      .join('\n')
  }
  if (typeof v === 'object' && v !== null) {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined)
    if (entries.length === 0) return '{}'
    return entries
      .map(([k, x]) => {
        const key = scalar(k)
        if (!isBlock(x)) return `${pad}${key}: ${inline(x)}`
        return `${pad}${key}:\n${emit(x, Array.isArray(x) ? indent : indent + 2)}`
      })
      .join('\n')
  }
  return pad + scalar(v)
}

function inline(v: unknown): string {
  if (Array.isArray(v)) return '[]'
  if (typeof v === 'object' && v !== null) return '{}'
  return scalar(v)
}
