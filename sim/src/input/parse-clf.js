/**
 * Common Log Format and Combined Log Format (Apache, nginx):
 * `host ident user [01/Jul/1995:00:00:01 -0400] "GET /path HTTP/1.0" 200 6245 ["referer" "agent"]`.
 */
import { indexOfByte, monthIndex, parseDigits, parseRequestLine, twoDigits } from './parse-util.js'

/** Parses CLF lines; keeps the last date's epoch so most lines skip calendar work. */
export class ClfParser {
  constructor () {
    this.name = 'clf'
    /** @type {number[]} bytes of the last `dd/Mon/yyyy` and zone seen */
    this.lastKey = []
    /** epoch seconds at 00:00:00 of the last date, in its zone */
    this.lastDay = 0
    /** the lines' UTC offset in minutes: undefined before the first line, null once two differ */
    /** @type {number | null | undefined} */
    this.zone = undefined
  }

  /** @returns {number | null} the log's UTC offset in minutes, or null when its lines disagree (or there were none) */
  utcOffsetMinutes () {
    return this.zone ?? null
  }

  /**
   * @param {Uint8Array} buf
   * @param {number} s line start
   * @param {number} e line end (exclusive, without the newline)
   * @param {import('./parse-util.js').ParsedLine} rec filled on success
   * @returns {boolean} false for a line that is not CLF
   */
  parse (buf, s, e, rec) {
    const hostEnd = indexOfByte(buf, 32, s, e)
    if (hostEnd <= s) return false
    const open = indexOfByte(buf, 91, hostEnd, e) // [
    if (open === -1 || open + 28 > e || buf[open + 27] !== 93) return false // ]
    const ts = this.time(buf, open + 1)
    if (ts < 0) return false
    // the request: `"…"` followed by a space and a three-digit status
    const q0 = open + 28
    if (buf[q0] !== 32 || buf[q0 + 1] !== 34) return false
    const rs = q0 + 2
    let q1 = rs
    for (;;) {
      q1 = indexOfByte(buf, 34, q1, e)
      if (q1 === -1) return false
      if (buf[q1 + 1] === 32 && buf[q1 - 1] !== 92 && buf[q1 + 2] >= 48 && buf[q1 + 2] <= 57) break
      q1++
    }
    if (!parseRequestLine(buf, rs, q1, rec)) return false
    const st = q1 + 2
    if (st + 3 > e || (st + 3 < e && buf[st + 3] !== 32)) return false
    const status = parseDigits(buf, st, st + 3)
    if (status < 0) return false
    let bytes = 0
    if (st + 3 < e) {
      const bs = st + 4
      let be = indexOfByte(buf, 32, bs, e)
      if (be === -1) be = e
      if (!(be === bs + 1 && buf[bs] === 45)) { // '-'
        bytes = parseDigits(buf, bs, be)
        if (bytes < 0) return false
      }
    }
    rec.ts = ts
    rec.hostBuf = buf
    rec.hostStart = s
    rec.hostEnd = hostEnd
    rec.status = status
    rec.bytes = bytes
    return true
  }

  /**
   * Epoch seconds of `dd/Mon/yyyy:HH:MM:SS ±hhmm` at `buf[i]`, or -1.
   * @param {Uint8Array} buf
   * @param {number} i
   * @returns {number}
   */
  time (buf, i) {
    const key = this.lastKey
    let same = key.length === 16
    if (same) {
      for (let k = 0; k < 11; k++) if (key[k] !== buf[i + k]) { same = false; break }
      for (let k = 0; same && k < 5; k++) if (key[11 + k] !== buf[i + 21 + k]) same = false
    }
    if (!same) {
      const day = twoDigits(buf, i)
      const mon = monthIndex(buf, i + 3)
      const year = parseDigits(buf, i + 7, i + 11)
      const zh = twoDigits(buf, i + 22)
      const zm = twoDigits(buf, i + 24)
      const sign = buf[i + 21] === 45 ? -1 : buf[i + 21] === 43 ? 1 : 0
      if (day < 1 || day > 31 || mon < 0 || year < 1970 || zh < 0 || zm < 0 || sign === 0 ||
          buf[i + 2] !== 47 || buf[i + 6] !== 47 || buf[i + 11] !== 58 || buf[i + 20] !== 32) return -1
      this.lastDay = Date.UTC(year, mon, day) / 1000 - sign * (zh * 3600 + zm * 60)
      const zone = sign * (zh * 60 + zm)
      if (this.zone === undefined) this.zone = zone
      else if (this.zone !== zone) this.zone = null
      key.length = 0
      for (let k = 0; k < 11; k++) key.push(buf[i + k])
      for (let k = 0; k < 5; k++) key.push(buf[i + 21 + k])
    }
    const hh = twoDigits(buf, i + 12)
    const mm = twoDigits(buf, i + 15)
    const ss = twoDigits(buf, i + 18)
    if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60 || buf[i + 14] !== 58 || buf[i + 17] !== 58) return -1
    return this.lastDay + hh * 3600 + mm * 60 + ss
  }
}
