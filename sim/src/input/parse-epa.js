/**
 * The EPA-HTTP variant of CLF (Internet Traffic Archive):
 * `host [DD:HH:MM:SS] "GET /path HTTP/1.0" status bytes`, where DD is the day
 * of the month and the year, month and zone are implied (August 1995, EDT).
 * `bytes` is `-` or absent on some lines; both read as 0.
 */
import { indexOfByte, parseDigits, parseRequestLine, twoDigits } from './parse-util.js'

/** The EPA trace's implied calendar: 29–30 August 1995, EDT (UTC−4). */
export const EPA_CALENDAR = Object.freeze({ year: 1995, month: 8, utcOffsetHours: -4 })

/** Parses EPA-HTTP lines. */
export class EpaParser {
  /** @param {{ year: number, month: number, utcOffsetHours: number }} [calendar] */
  constructor (calendar = EPA_CALENDAR) {
    this.name = 'epa'
    /** epoch seconds of day 0 of the month, local midnight */
    this.base = Date.UTC(calendar.year, calendar.month - 1, 0) / 1000 - calendar.utcOffsetHours * 3600
    this.offsetMinutes = calendar.utcOffsetHours * 60
  }

  /** @returns {number} the log's UTC offset in minutes (implied by the trace: EDT) */
  utcOffsetMinutes () {
    return this.offsetMinutes
  }

  /**
   * @param {Uint8Array} buf
   * @param {number} s
   * @param {number} e
   * @param {import('./parse-util.js').ParsedLine} rec
   * @returns {boolean}
   */
  parse (buf, s, e, rec) {
    const hostEnd = indexOfByte(buf, 32, s, e)
    if (hostEnd <= s) return false
    const b = hostEnd + 1
    if (b + 14 > e || buf[b] !== 91 || buf[b + 12] !== 93 || buf[b + 3] !== 58 || buf[b + 6] !== 58 || buf[b + 9] !== 58) return false
    const dd = twoDigits(buf, b + 1)
    const hh = twoDigits(buf, b + 4)
    const mm = twoDigits(buf, b + 7)
    const ss = twoDigits(buf, b + 10)
    if (dd < 1 || dd > 31 || hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60) return false
    if (buf[b + 13] !== 32 || buf[b + 14] !== 34) return false
    const rs = b + 15
    // the request ends at the last quote: EPA requests hold no quotes of their own
    let q1 = e - 1
    while (q1 >= rs && buf[q1] !== 34) q1--
    if (q1 < rs || buf[q1 + 1] !== 32) return false
    if (!parseRequestLine(buf, rs, q1, rec)) return false
    const st = q1 + 2
    let se = indexOfByte(buf, 32, st, e)
    if (se === -1) se = e
    const status = parseDigits(buf, st, se)
    if (status < 0 || se - st !== 3) return false
    let bytes = 0
    if (se < e) {
      const bs = se + 1
      if (!(e === bs + 1 && buf[bs] === 45) && bs < e) {
        bytes = parseDigits(buf, bs, e)
        if (bytes < 0) return false
      }
    }
    rec.ts = this.base + dd * 86400 + hh * 3600 + mm * 60 + ss
    rec.hostBuf = buf
    rec.hostStart = s
    rec.hostEnd = hostEnd
    rec.status = status
    rec.bytes = bytes
    return true
  }
}
