/**
 * @module owned-buffer — a mutable buffer with exactly one owner at a time.
 *
 * The list/watch state is immutable data replaced by every step, except for the buffers that grow
 * with the collection (a paginated list's items, a streaming list's objects). Copying such a buffer
 * on every page or event would make the initial list O(n²); instead one handle owns it, is edited in
 * place, and hands the buffer on to the next state's handle. A handle that handed its buffer on is
 * spent: using it again throws, so a state stepped twice fails loudly instead of silently sharing
 * one buffer between two states.
 */
import { EdgeopError } from '../core/errors.ts'

/**
 * The sole owner of a mutable buffer `B`.
 *
 * Contract: {@link update} and {@link take} each spend this handle; after either, every further
 * call throws `EDGEOP_ERR_WATCH`. Nothing else can reach the buffer while a handle owns it.
 */
export class OwnedBuffer<B> {
  #buffer: B | undefined
  #spent = false

  constructor(buffer: B) {
    this.#buffer = buffer
  }

  /** Whether this handle still owns its buffer. */
  get owned(): boolean {
    return !this.#spent
  }

  /** Edits the buffer in place and hands it to a new handle, which is returned; this one is spent. */
  update(edit: (buffer: B) => void): OwnedBuffer<B> {
    const buffer = this.take()
    edit(buffer)
    return new OwnedBuffer(buffer)
  }

  /** Takes the buffer out for good (to emit it); this handle is spent. */
  take(): B {
    if (this.#spent) {
      throw new EdgeopError(
        'EDGEOP_ERR_WATCH',
        'a watch state buffer was used after it moved on: one state was stepped twice',
        { step: 'watch state' },
      )
    }
    const buffer = this.#buffer as B
    this.#buffer = undefined
    this.#spent = true
    return buffer
  }
}
