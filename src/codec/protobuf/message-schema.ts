/**
 * @module message-schema — one protobuf message of the generated table, compiled on first use.
 *
 * The table (`messages.generated.ts`) stores each message as a short spec string, so that a bundle carries
 * a few bytes per field and only the messages of the kinds it imports. {@link compile} turns a spec into
 * an array indexed by field number the decoder can dispatch on.
 */
import { EdgeopError } from '../../core/errors.ts'

/** How a field's value is encoded and how it appears in JSON (a number, for a fast switch). */
export const Code = {
  String: 0,
  Bool: 1,
  Int: 2,
  Double: 3,
  Bytes: 4,
  Message: 5,
  Time: 6,
  MicroTime: 7,
  Quantity: 8,
  IntOrString: 9,
  RawExtension: 10,
  FieldsV1: 11,
  Duration: 12,
} as const
/** One of {@link Code}'s values. */
export type Code = (typeof Code)[keyof typeof Code]

const CODES: Record<string, Code> = {
  s: Code.String,
  b: Code.Bool,
  i: Code.Int,
  d: Code.Double,
  y: Code.Bytes,
  m: Code.Message,
  T: Code.Time,
  U: Code.MicroTime,
  Q: Code.Quantity,
  I: Code.IntOrString,
  R: Code.RawExtension,
  F: Code.FieldsV1,
  D: Code.Duration,
}

/** One field of a compiled message. */
export interface FieldSchema {
  readonly number: number
  /** Its JSON name; empty for an embedded message whose fields are promoted. */
  readonly name: string
  readonly code: Code
  /** The message of a `Message` field (or of a map's values). */
  readonly message: MessageSchema | undefined
  readonly repeated: boolean
  /** A map from string keys; `code`/`message` describe its values. */
  readonly map: boolean
  /** A Go pointer: present on the wire only when set, and then in JSON even when zero. */
  readonly pointer: boolean
  /** JSON `omitempty`: a zero scalar, an empty list, map or string, a nil pointer is left out. */
  readonly omitEmpty: boolean
  /** JSON `omitzero`: a zero value (a zero time, a zero struct) is left out. */
  readonly omitZero: boolean
  /** An embedded struct: its fields appear in the parent's JSON object. */
  readonly inline: boolean
  /** Its bit in the decoder's mask of fields seen, if it is one of {@link CompiledMessage.whenAbsent}; else 0. */
  absentBit: number
}

/** A compiled message: fields by number, and the fields that appear in JSON even when absent from the wire. */
export interface CompiledMessage {
  readonly byNumber: readonly (FieldSchema | undefined)[]
  /** Fields to fill when absent from the wire (Go would still marshal their zero value). */
  readonly whenAbsent: readonly FieldSchema[]
  /** Makes the plain objects of this message (see decode.ts `newObject`). */
  readonly make: new () => Record<string, unknown>
}

/** A protobuf message of the table: its Go name, and its compiled form (built once, on first use). */
export interface MessageSchema {
  /** The Go type's name, e.g. `PodSpec` (in decode errors). */
  readonly name: string
  /**
   * `apiVersion` and `kind` of a kind nested in another object (a StatefulSet's volumeClaimTemplates): the API
   * server's JSON carries them there, protobuf cannot, so the decoder adds them to nested values.
   */
  readonly typeMeta?: { readonly apiVersion: string; readonly kind: string }
  /** The compiled fields. @throws EdgeopError `EDGEOP_ERR_INVALID` if the generated spec is malformed. */
  compiled(): CompiledMessage
}

/** The decoder tracks the fields shown when absent in one 31-bit mask (the largest built-in message has 9). */
const MAX_ABSENT_FIELDS = 31

const FIELD = /^(\d+)([rpozn]*)(M?)([sbidymTUQIRFD])(\d*):(.*)$/

/** A message of the generated table (see the table's header for the spec format). */
export function message(
  name: string,
  spec: string,
  refs: (() => readonly MessageSchema[]) | undefined,
  typeMeta?: string,
): MessageSchema {
  let compiled: CompiledMessage | undefined
  const [apiVersion, kindName] = typeMeta ? typeMeta.split(' ') : []
  return {
    name,
    ...(apiVersion && kindName ? { typeMeta: { apiVersion, kind: kindName } } : {}),
    compiled() {
      compiled ??= compile(name, spec, refs ? refs() : [])
      return compiled
    },
  }
}

function compile(name: string, spec: string, refs: readonly MessageSchema[]): CompiledMessage {
  const byNumber: (FieldSchema | undefined)[] = []
  const whenAbsent: FieldSchema[] = []
  for (const part of spec === '' ? [] : spec.split(' ')) {
    const m = FIELD.exec(part)
    const code = m ? CODES[m[4] as string] : undefined
    if (!m || code === undefined) {
      throw new EdgeopError(
        'EDGEOP_ERR_INVALID',
        `protobuf schema of ${name}: malformed field ${JSON.stringify(part)}`,
        {
          step: 'compile protobuf schema',
        },
      )
    }
    const flags = m[2] as string
    const ref = m[5] === '' ? undefined : refs[Number(m[5])]
    if (code === Code.Message && ref === undefined) {
      throw new EdgeopError(
        'EDGEOP_ERR_INVALID',
        `protobuf schema of ${name}: field ${part} names no message`,
        {
          step: 'compile protobuf schema',
        },
      )
    }
    const field: FieldSchema = {
      number: Number(m[1]),
      name: m[6] as string,
      code,
      message: ref,
      repeated: flags.includes('r'),
      map: m[3] === 'M',
      pointer: flags.includes('p'),
      omitEmpty: flags.includes('o'),
      omitZero: flags.includes('z'),
      inline: flags.includes('n'),
      absentBit: 0,
    }
    byNumber[field.number] = field
    if (showsWhenAbsent(field)) {
      if (whenAbsent.length === MAX_ABSENT_FIELDS) {
        throw new EdgeopError(
          'EDGEOP_ERR_INVALID',
          `protobuf schema of ${name}: more than ${MAX_ABSENT_FIELDS} fields shown when absent`,
          {
            step: 'compile protobuf schema',
          },
        )
      }
      field.absentBit = 1 << whenAbsent.length
      whenAbsent.push(field)
    }
  }
  // A constructor per message, for V8's slack tracking; its instances are plain objects.
  const make = function PlainObject() {} as unknown as new () => Record<string, unknown>
  make.prototype = Object.prototype
  return { byNumber, whenAbsent, make }
}

/**
 * Whether Go's JSON encoder writes a field whose value the protobuf decoder left at Go's zero value:
 * a nil list, map or pointer as `null` unless omitted; a zero scalar unless omitempty; a struct always
 * (omitempty never omits a struct) unless omitzero.
 */
function showsWhenAbsent(f: FieldSchema): boolean {
  if (f.inline) return true
  if (f.repeated || f.map || f.pointer || f.code === Code.Bytes) return !f.omitEmpty && !f.omitZero
  switch (f.code) {
    case Code.Message:
    case Code.Time:
    case Code.MicroTime:
    case Code.Quantity:
    case Code.IntOrString:
    case Code.RawExtension:
    case Code.FieldsV1:
    case Code.Duration:
      return !f.omitZero
    default:
      return !f.omitEmpty && !f.omitZero
  }
}
