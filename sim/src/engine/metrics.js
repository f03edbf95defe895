/**
 * Counters a replay keeps besides totals: an hourly time series, peaks per
 * second of coordinator messages, and the statistics of upload fairness.
 */
import { growTo } from '../batch.js'

/** Series kept per hour of trace time. */
export const HOURLY_SERIES = Object.freeze(['requests', 'bytes', 'originBytes', 'peerBytes', 'cacheBytes', 'oracleBytes', 'lookups', 'updates', 'joins', 'onlinePeak'])

/** Per-hour counters, growing with the trace. */
export class HourlySeries {
  constructor () {
    /** epoch seconds of hour 0 (set by the first request) */
    this.start = NaN
    this.hours = 0
    /** @type {Record<string, Float64Array>} */
    this.series = {}
    for (const name of HOURLY_SERIES) this.series[name] = new Float64Array(24 * 8)
  }

  /**
   * The hour index of time `t`, growing the arrays to include it.
   * @param {number} t
   * @returns {number}
   */
  hourOf (t) {
    if (Number.isNaN(this.start)) this.start = Math.floor(t / 3600) * 3600
    const h = Math.floor((t - this.start) / 3600)
    if (h >= this.hours) {
      this.hours = h + 1
      if (this.hours > this.series.requests.length) {
        for (const name of HOURLY_SERIES) this.series[name] = growTo(this.series[name], this.hours)
      }
    }
    return h
  }

  /** @returns {{ start: number, hours: number } & Record<string, number[]>} plain arrays for JSON */
  toJSON () {
    /** @type {any} */
    const out = { start: Number.isNaN(this.start) ? 0 : this.start, hours: this.hours }
    for (const name of HOURLY_SERIES) out[name] = Array.from(this.series[name].subarray(0, this.hours))
    return out
  }
}

/** Counts events per whole second and remembers the busiest second. */
export class PeakRate {
  constructor () {
    this.second = -Infinity
    this.current = 0
    this.peak = 0
    this.total = 0
  }

  /**
   * @param {number} t event time, nondecreasing
   * @param {number} [n]
   */
  add (t, n = 1) {
    const s = Math.floor(t)
    if (s !== this.second) {
      this.second = s
      this.current = 0
    }
    this.current += n
    this.total += n
    if (this.current > this.peak) this.peak = this.current
  }
}

/**
 * The meters a replay keeps besides its totals, the same in the engine and
 * the reference model (plumbing, not the model they check each other on):
 * the coordinator's messages per second, and the hourly series with the hour
 * the replay is in.
 */
export class ReplayMeters {
  constructor () {
    this.lookups = new PeakRate()
    this.updates = new PeakRate()
    this.joins = new PeakRate()
    this.hourly = new HourlySeries()
    /** the index of the hour the replay is in (−1 before the first request) */
    this.hour = -1
    /** when that hour ends */
    this.hourEnd = -Infinity
    /** the hourly series by name (their arrays are replaced as they grow: index them afresh) */
    this.series = this.hourly.series
  }

  /**
   * The first request at or after `hourEnd`: the hour moves on (times never
   * go back), and the clients online count toward its peak.
   * @param {number} t
   * @param {number} online clients online now
   */
  startHour (t, online) {
    const h = this.hour = this.hourly.hourOf(t)
    this.hourEnd = this.hourly.start + (h + 1) * 3600
    this.noteOnline(online)
  }

  /** @param {number} online clients online now: the hour's peak, if above it */
  noteOnline (online) {
    const peak = this.series.onlinePeak
    if (peak[this.hour] < online) peak[this.hour] = online
  }
}

/**
 * Gini coefficient of non-negative values (0 = all equal, →1 = one holds all).
 * @param {Float64Array} sorted ascending
 * @returns {number}
 */
export function gini (sorted) {
  const n = sorted.length
  let sum = 0
  let weighted = 0
  for (let i = 0; i < n; i++) {
    sum += sorted[i]
    weighted += (i + 1) * sorted[i]
  }
  if (n === 0 || sum === 0) return 0
  return (2 * weighted) / (n * sum) - (n + 1) / n
}

/**
 * Nearest-rank percentile.
 * @param {Float64Array} sorted ascending
 * @param {number} p 0–100
 * @returns {number}
 */
export function percentile (sorted, p) {
  if (sorted.length === 0) return 0
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]
}

/**
 * Points of the Lorenz curve of upload (share of clients → share of bytes), at most `points` of them.
 * @param {Float64Array} sorted ascending
 * @param {number} [points]
 * @returns {[number, number][]}
 */
export function lorenz (sorted, points = 50) {
  const n = sorted.length
  let total = 0
  for (let i = 0; i < n; i++) total += sorted[i]
  /** @type {[number, number][]} */
  const out = [[0, 0]]
  if (n === 0 || total === 0) return out
  let acc = 0
  let next = 1
  for (let i = 0; i < n; i++) {
    acc += sorted[i]
    if ((i + 1) / n >= next / points || i === n - 1) {
      out.push([(i + 1) / n, acc / total])
      next = Math.floor(((i + 1) / n) * points) + 1
    }
  }
  return out
}

/**
 * Fairness of upload among participating clients.
 * @param {Float64Array} uploaded bytes served, per client
 * @param {Uint8Array} participated 1 for clients that took part (adopters seen)
 * @param {number} n clients to consider
 * @returns {{ participants: number, uploaders: number, maxBytes: number, p99Bytes: number, p99UploaderBytes: number, meanBytes: number, gini: number, lorenz: [number, number][] }}
 */
export function uploadFairness (uploaded, participated, n) {
  let m = 0
  for (let c = 0; c < n; c++) if (participated[c]) m++
  const values = new Float64Array(m)
  let k = 0
  let uploaders = 0
  let sum = 0
  for (let c = 0; c < n; c++) {
    if (!participated[c]) continue
    values[k++] = uploaded[c]
    sum += uploaded[c]
    if (uploaded[c] > 0) uploaders++
  }
  values.sort()
  return {
    participants: m,
    uploaders,
    maxBytes: m ? values[m - 1] : 0,
    p99Bytes: percentile(values, 99),
    p99UploaderBytes: percentile(values.subarray(m - uploaders), 99),
    meanBytes: m ? sum / m : 0,
    gini: gini(values),
    lorenz: lorenz(values)
  }
}
