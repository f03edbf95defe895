/**
 * Byte-level helpers shared by the log parsers, and the record they fill. The
 * parsers read straight from the read buffer; a line never becomes a string.
 */

/**
 * What a parser extracts from one line. Reused for every line of a trace.
 * `host` and `url` are byte ranges of `hostBuf` / `urlBuf` (the line's own
 * buffer, or a scratch buffer when a CSV field had to be unescaped).
 */
export class ParsedLine {
  constructor () {
    /** seconds since the Unix epoch */
    this.ts = 0
    /** @type {Uint8Array} */
    this.hostBuf = new Uint8Array(0)
    this.hostStart = 0
    this.hostEnd = 0
    /** @type {Uint8Array} */
    this.urlBuf = new Uint8Array(0)
    this.urlStart = 0
    this.urlEnd = 0
    this.status = 0
    /** body bytes sent; 0 when the log says `-` or nothing */
    this.bytes = 0
    /** method is GET (or absent) */
    this.get = true
    /** the response's content type, when the log has one (CSV `content_type`): bytes [typeStart, typeEnd) of typeBuf; empty if none */
    /** @type {Uint8Array} */
    this.typeBuf = this.urlBuf
    this.typeStart = 0
    this.typeEnd = 0
  }
}

/**
 * The unsigned decimal integer in `buf[start, end)`, or -1 if it is empty or
 * holds anything but digits.
 * @param {Uint8Array} buf
 * @param {number} start
 * @param {number} end
 * @returns {number}
 */
export function parseDigits (buf, start, end) {
  if (start >= end) return -1
  let v = 0
  for (let i = start; i < end; i++) {
    const d = buf[i] - 48
    if (d < 0 || d > 9) return -1
    v = v * 10 + d
  }
  return v
}

/**
 * The two-digit number at `buf[i]`, or -1.
 * @param {Uint8Array} buf
 * @param {number} i
 * @returns {number}
 */
export function twoDigits (buf, i) {
  const a = buf[i] - 48
  const b = buf[i + 1] - 48
  if (a < 0 || a > 9 || b < 0 || b > 9) return -1
  return a * 10 + b
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']

/**
 * Month index 0–11 of a three-letter English abbreviation at `buf[i]` (any case), or -1.
 * @param {Uint8Array} buf
 * @param {number} i
 * @returns {number}
 */
export function monthIndex (buf, i) {
  const s = String.fromCharCode(buf[i] | 32, buf[i + 1] | 32, buf[i + 2] | 32)
  return MONTHS.indexOf(s)
}

/**
 * Index of the first `byte` in `buf[from, end)`, or -1.
 * @param {Uint8Array} buf
 * @param {number} byte
 * @param {number} from
 * @param {number} end
 * @returns {number}
 */
export function indexOfByte (buf, byte, from, end) {
  for (let i = from; i < end; i++) if (buf[i] === byte) return i
  return -1
}

/**
 * Fills `rec`'s request fields from an HTTP request line `METHOD URL [PROTO]`
 * in `buf[start, end)`. A line of only a URL (HTTP/0.9) counts as GET.
 * @param {Uint8Array} buf
 * @param {number} start
 * @param {number} end
 * @param {ParsedLine} rec
 * @returns {boolean} false when no URL can be found
 */
export function parseRequestLine (buf, start, end, rec) {
  const sp = indexOfByte(buf, 32, start, end)
  let urlStart, method
  if (sp === -1) {
    urlStart = start
    method = -1
  } else {
    urlStart = sp + 1
    method = sp - start
  }
  let urlEnd = indexOfByte(buf, 32, urlStart, end)
  if (urlEnd === -1) urlEnd = end
  if (urlEnd <= urlStart) return false
  rec.get = method === -1 || (method === 3 && buf[start] === 71 && buf[start + 1] === 69 && buf[start + 2] === 84)
  rec.urlBuf = /** @type {Uint8Array} */ (buf)
  rec.urlStart = urlStart
  rec.urlEnd = urlEnd
  return true
}
