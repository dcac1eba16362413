/**
 * @module defined-props — an object without its undefined-valued keys, for the few places where a key's
 * presence, not only its value, is observable.
 *
 * edgeop writes an optional field as a plain property (`{ signal, timeoutMs }`): with
 * `exactOptionalPropertyTypes` off it type-checks, and every reader treats `undefined` as absent. A present
 * key holding `undefined` differs only where keys are counted or spread: options handed to Node's or
 * undici's APIs, a spread over an object that may already carry the key, `Object.keys`, `in` and
 * `deepStrictEqual`. Those places build the object with {@link definedProps}.
 */

/**
 * A shallow copy of `props` without the keys whose value is `undefined` (`null`, `''`, `0` and `false`
 * are kept).
 *
 * @example
 * new Agent({ keepAlive: true, ...definedProps({ servername, secureContext }) })
 */
export function definedProps<T extends object>(props: T): DefinedProps<T> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(props)) if (v !== undefined) out[k] = v
  return out as DefinedProps<T>
}

/** `T` with every key optional and `undefined` out of its values: what {@link definedProps} returns. */
export type DefinedProps<T> = { [K in keyof T]?: Exclude<T[K], undefined> }
