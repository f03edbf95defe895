/**
 * Counts what the origin serves: requests and response-body bytes, in total and
 * per path, and second by second over a bounded window (origin-history.js).
 * This is the figure Maygh exists to shrink, so the demo's dashboard and the
 * end-to-end tests read it.
 */
import { createOriginHistory } from './origin-history.js'

/** Key for responses to paths the site does not serve (404, 400, 405), so junk cannot grow the map. */
export const UNKNOWN_PATH = '(unknown)'

/**
 * @typedef {{ requests: number, bytes: number }} Counter
 * @typedef {{ requests: number, bytes: number, byPath: Record<string, Counter> }} OriginStatsSnapshot
 * @typedef {import('./origin-history.js').OriginHistory} OriginHistory
 */

/**
 * A fresh set of counters.
 * @param {{ historySeconds: number, now?: () => number }} options how many seconds of history to keep; the clock
 * @returns {{ record: (path: string, bytes: number, asset?: boolean) => void, snapshot: () => OriginStatsSnapshot, history: () => OriginHistory, reset: () => void }}
 */
export function createOriginStats ({ historySeconds, now }) {
  const recent = createOriginHistory({ seconds: historySeconds, now })
  let requests = 0
  let bytes = 0
  /** @type {Map<string, Counter>} */
  let byPath = new Map()
  return {
    /**
     * Count one response.
     * @param {string} path route path, or {@link UNKNOWN_PATH}
     * @param {number} sent body bytes sent (0 for HEAD and 304)
     * @param {boolean} [asset] whether `path` is a manifest asset (what visitors could serve each other)
     */
    record (path, sent, asset = false) {
      recent.add(sent, asset)
      requests++
      bytes += sent
      const counter = byPath.get(path) ?? { requests: 0, bytes: 0 }
      counter.requests++
      counter.bytes += sent
      byPath.set(path, counter)
    },
    /** A JSON-ready copy, paths sorted by bytes, most first. */
    snapshot () {
      const sorted = [...byPath].sort((a, b) => b[1].bytes - a[1].bytes || (a[0] < b[0] ? -1 : 1))
      return { requests, bytes, byPath: Object.fromEntries(sorted.map(([p, c]) => [p, { ...c }])) }
    },
    /** The last `historySeconds`, second by second. */
    history: () => recent.series(),
    /** Zero everything, history included. */
    reset () {
      recent.clear()
      requests = 0
      bytes = 0
      byPath = new Map()
    }
  }
}
