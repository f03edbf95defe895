/**
 * CSV traces with a header naming at least `ts_unix,client,url,status,bytes`
 * (and optionally `method` and `content_type`), in any column order. Fields may be quoted with
 * RFC 4180 rules (`"a,b"`, `""` for a quote). `ts_unix` may have a fraction;
 * an empty or `-` `bytes` reads as 0.
 */
import { ERRORS, MayghError } from '../../../protocol/index.js'
import { parseDigits } from './parse-util.js'

const REQUIRED = ['ts_unix', 'client', 'url', 'status', 'bytes']

/** Parses CSV lines after reading the header. */
export class CsvParser {
  constructor () {
    this.name = 'csv'
    /** column index of each field; -1 when absent */
    this.col = { ts_unix: -1, client: -1, url: -1, status: -1, bytes: -1, method: -1, content_type: -1 }
    this.columns = 0
    this.haveHeader = false
    /** field bounds of the current line */
    this.starts = new Int32Array(64)
    this.ends = new Int32Array(64)
    /** @type {Uint8Array[]} unescaped copies of quoted fields with `""`, by column */
    this.scratch = []
    /** @type {(Uint8Array | null)[]} which buffer each field lives in: null = the line's */
    this.fieldBuf = []
  }

  /** @returns {null} `ts_unix` is seconds since the epoch: the log carries no UTC offset */
  utcOffsetMinutes () {
    return null
  }

  /**
   * Reads the header line. Throws MGH_SIM_ERR_CSV_HEADER when a required column is missing.
   * @param {Uint8Array} buf
   * @param {number} s
   * @param {number} e
   */
  header (buf, s, e) {
    const names = Buffer.from(buf.buffer, buf.byteOffset + s, e - s).toString('latin1').split(',').map((n) => n.trim().replace(/^"|"$/g, '').toLowerCase())
    for (const key of Object.keys(this.col)) this.col[/** @type {keyof CsvParser['col']} */ (key)] = names.indexOf(key)
    const missing = REQUIRED.filter((k) => this.col[/** @type {keyof CsvParser['col']} */ (k)] === -1)
    if (missing.length > 0) throw new MayghError(ERRORS.MGH_SIM_ERR_CSV_HEADER, `missing ${missing.join(', ')} in "${names.join(',')}"`)
    this.columns = Math.max(...Object.values(this.col)) + 1
    if (this.columns > this.starts.length) throw new MayghError(ERRORS.MGH_SIM_ERR_CSV_HEADER, 'too many columns before the required ones')
    this.haveHeader = true
  }

  /**
   * @param {Uint8Array} buf
   * @param {number} s
   * @param {number} e
   * @param {import('./parse-util.js').ParsedLine} rec
   * @returns {boolean}
   */
  parse (buf, s, e, rec) {
    if (!this.splitFields(buf, s, e)) return false
    const c = this.col
    const ts = this.number(buf, c.ts_unix)
    if (!(ts >= 0)) return false
    const status = this.digits(buf, c.status)
    if (status < 0) return false
    let bytes = 0
    const bs = this.starts[c.bytes]
    const be = this.ends[c.bytes]
    if (be > bs && !(be === bs + 1 && buf[bs] === 45)) {
      bytes = this.digits(buf, c.bytes)
      if (bytes < 0) return false
    }
    if (this.ends[c.url] <= this.starts[c.url] || this.ends[c.client] <= this.starts[c.client]) return false
    rec.ts = ts
    rec.status = status
    rec.bytes = bytes
    rec.hostBuf = this.fieldBuf[c.client] ?? buf
    rec.hostStart = this.starts[c.client]
    rec.hostEnd = this.ends[c.client]
    rec.urlBuf = this.fieldBuf[c.url] ?? buf
    rec.urlStart = this.starts[c.url]
    rec.urlEnd = this.ends[c.url]
    if (c.method === -1 || this.ends[c.method] === this.starts[c.method]) {
      rec.get = true
    } else {
      const mb = this.fieldBuf[c.method] ?? buf
      const ms = this.starts[c.method]
      rec.get = this.ends[c.method] - ms === 3 && mb[ms] === 71 && mb[ms + 1] === 69 && mb[ms + 2] === 84
    }
    if (c.content_type === -1) {
      rec.typeStart = rec.typeEnd = 0
    } else {
      rec.typeBuf = this.fieldBuf[c.content_type] ?? buf
      rec.typeStart = this.starts[c.content_type]
      rec.typeEnd = this.ends[c.content_type]
      // `-` is how logs write "none"
      if (rec.typeEnd === rec.typeStart + 1 && rec.typeBuf[rec.typeStart] === 45) rec.typeEnd = rec.typeStart
    }
    return true
  }

  /**
   * Records the bounds of the first `columns` fields; false if the line has fewer.
   * @param {Uint8Array} buf
   * @param {number} s
   * @param {number} e
   * @returns {boolean}
   */
  splitFields (buf, s, e) {
    let p = s
    for (let f = 0; f < this.columns; f++) {
      this.fieldBuf[f] = null
      if (p > e) return false
      if (buf[p] === 34) { // quoted
        let q = p + 1
        let escaped = false
        for (;;) {
          while (q < e && buf[q] !== 34) q++
          if (q >= e) return false
          if (buf[q + 1] === 34 && q + 1 < e) { escaped = true; q += 2; continue }
          break
        }
        if (escaped) {
          this.unescape(f, buf, p + 1, q)
        } else {
          this.starts[f] = p + 1
          this.ends[f] = q
        }
        p = q + 1
        if (p < e && buf[p] !== 44) return false
      } else {
        let q = p
        while (q < e && buf[q] !== 44) q++
        this.starts[f] = p
        this.ends[f] = q
        p = q
      }
      p++ // past the comma
    }
    return true
  }

  /**
   * Copies a quoted field without its doubled quotes into a scratch buffer.
   * @param {number} f
   * @param {Uint8Array} buf
   * @param {number} s
   * @param {number} e
   */
  unescape (f, buf, s, e) {
    let out = this.scratch[f]
    if (out === undefined || out.length < e - s) out = this.scratch[f] = new Uint8Array(Math.max(256, e - s))
    let n = 0
    for (let i = s; i < e; i++) {
      out[n++] = buf[i]
      if (buf[i] === 34) i++
    }
    this.fieldBuf[f] = out
    this.starts[f] = 0
    this.ends[f] = n
  }

  /**
   * @param {Uint8Array} buf
   * @param {number} f
   * @returns {number} the field's digits, or -1
   */
  digits (buf, f) {
    return parseDigits(this.fieldBuf[f] ?? buf, this.starts[f], this.ends[f])
  }

  /**
   * A non-negative decimal number with an optional fraction, or -1.
   * @param {Uint8Array} buf
   * @param {number} f
   * @returns {number}
   */
  number (buf, f) {
    const b = this.fieldBuf[f] ?? buf
    const s = this.starts[f]
    const e = this.ends[f]
    let dot = s
    while (dot < e && b[dot] !== 46) dot++
    const whole = parseDigits(b, s, dot)
    if (whole < 0) return -1
    if (dot >= e - 1) return dot === e ? whole : -1
    const frac = parseDigits(b, dot + 1, e)
    if (frac < 0) return -1
    return whole + frac / 10 ** (e - dot - 1)
  }
}
