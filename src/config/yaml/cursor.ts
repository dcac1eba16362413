/**
 * @module yaml/cursor — the read position of the YAML reader: lines, columns, blanks, comments and errors.
 *
 * Columns are 0-based internally (a column is also an indentation width) and 1-based
 * in messages. Messages never quote document text: they name a position and, at most,
 * a mapping key or alias name (through core's `quoteInput`: escaped, at most 80 characters) or one indicator character.
 */
import { EdgeopError } from '../../core/errors.ts'

/** True for the separation blanks YAML allows inside a line: space and tab. */
export function isBlank(ch: string): boolean {
  return ch === ' ' || ch === '\t'
}

/** True for a blank, a line break or the end of input (`''`). */
export function isBlankOrEnd(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\n' || ch === ''
}

/** A position in a YAML text plus the helpers every part of the reader shares. */
export class YamlCursor {
  /** The text with a leading BOM removed and CRLF / CR line ends turned into LF. */
  readonly src: string
  /** The file name used in messages. */
  readonly file: string
  /** Current offset into {@link src}. */
  pos = 0
  readonly #lineStarts: number[] = [0]

  constructor(text: string, file: string) {
    this.src = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n')
    this.file = file
    for (let i = this.src.indexOf('\n'); i >= 0; i = this.src.indexOf('\n', i + 1))
      this.#lineStarts.push(i + 1)
  }

  /** The character at the cursor, `''` at the end. */
  get ch(): string {
    return this.src[this.pos] ?? ''
  }

  /** The character `offset` places after the cursor, `''` past the end. */
  at(offset: number): string {
    return this.src[this.pos + offset] ?? ''
  }

  /** True at the end of the text. */
  get eof(): boolean {
    return this.pos >= this.src.length
  }

  /** 1-based line of `pos`. */
  line(pos = this.pos): number {
    let lo = 0
    let hi = this.#lineStarts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if ((this.#lineStarts[mid] ?? 0) <= pos) lo = mid
      else hi = mid - 1
    }
    return lo + 1
  }

  /** 0-based column of `pos` (equal to the indentation when `pos` is the first character of a line). */
  col(pos = this.pos): number {
    return pos - (this.#lineStarts[this.line(pos) - 1] ?? 0)
  }

  /** An `EDGEOP_ERR_YAML` error located at `pos`: `file:line:column: message`. */
  error(message: string, pos = this.pos): EdgeopError {
    return new EdgeopError(
      'EDGEOP_ERR_YAML',
      `${this.file}:${this.line(pos)}:${this.col(pos) + 1}: ${message}`,
      {
        step: 'parse YAML',
      },
    )
  }

  /** Skips spaces and tabs on the current line. */
  skipBlanks(): void {
    while (isBlank(this.ch)) this.pos++
  }

  /** True when `#` at the cursor starts a comment (it follows a blank or starts the line). */
  atComment(): boolean {
    return this.ch === '#' && (this.pos === 0 || isBlankOrEnd(this.src[this.pos - 1] ?? ''))
  }

  /** Skips blanks and a comment; true when the cursor then sits at a line break or the end. */
  atLineEnd(): boolean {
    this.skipBlanks()
    if (this.atComment()) while (this.ch !== '\n' && !this.eof) this.pos++
    return this.ch === '\n' || this.eof
  }

  /** Requires that nothing but blanks and a comment follow on this line. */
  expectLineEnd(what = 'the value'): void {
    if (!this.atLineEnd()) throw this.error(`unexpected content after ${what}`)
  }

  /**
   * Skips blanks, comments and line breaks up to the next content character.
   * Returns true when at least one line break was crossed.
   * Throws when a tab appears in the indentation of a line that has content.
   */
  skipToContent(): boolean {
    let crossed = false
    if (this.pos === 0) this.#checkIndentation()
    for (;;) {
      this.atLineEnd()
      if (this.ch !== '\n') return crossed
      this.pos++
      crossed = true
      this.#checkIndentation()
    }
  }

  /** At a line start: throws when the indentation of a line with content contains a tab. */
  #checkIndentation(): void {
    let end = this.pos
    let tab = -1
    for (let ch = this.src[end]; ch === ' ' || ch === '\t'; ch = this.src[++end])
      if (ch === '\t' && tab < 0) tab = end
    const next = this.src[end] ?? ''
    if (tab >= 0 && next !== '#' && next !== '\n' && next !== '') {
      throw this.error('tab character used for indentation (YAML allows only spaces)', tab)
    }
  }

  /** True when the cursor is at a `---` or `...` document marker at the start of a line. */
  atDocumentMarker(marker?: '---' | '...'): boolean {
    if (this.col() !== 0) return false
    const m = this.src.slice(this.pos, this.pos + 3)
    if (m !== '---' && m !== '...') return false
    return (marker === undefined || m === marker) && isBlankOrEnd(this.at(3))
  }

  /** True when the cursor is at a mapping value indicator: `:` followed by a blank or line end. */
  atValueIndicator(): boolean {
    return this.ch === ':' && isBlankOrEnd(this.at(1))
  }

  /** True when the cursor is at a block sequence indicator: `-` followed by a blank or line end. */
  atSequenceEntry(): boolean {
    return this.ch === '-' && isBlankOrEnd(this.at(1))
  }
}
