/**
 * The origin's recent past, second by second: requests, body bytes, and of
 * those the bytes of manifest assets (what visitors could serve each other),
 * for the dashboard's charts, so that a dashboard opened after the traffic
 * still shows it. A fixed ring of one slot per second: memory is the same
 * however long the origin runs or however busy it is (four Float64Arrays,
 * 32 bytes a second; 600 s: 19 KB). A second with no response reads as zero.
 */

/**
 * Oldest first; the last entry is the second in progress, which started at `end`.
 * @typedef {{ intervalMs: number, end: number, requests: number[], bytes: number[], assetBytes: number[] }} OriginHistory
 */

/**
 * @param {{ seconds: number, now?: () => number }} options
 *   `seconds`: how many seconds are kept (the latest, the one in progress, included);
 *   `now`: the clock, ms since the epoch (tests pass their own)
 */
export function createOriginHistory ({ seconds, now = Date.now }) {
  if (!Number.isInteger(seconds) || seconds < 1) throw new TypeError('seconds must be a positive integer')
  // Which second (since the epoch) each slot holds; -1: none, so it reads as zero.
  const stamps = new Float64Array(seconds).fill(-1)
  const requests = new Float64Array(seconds)
  const bytes = new Float64Array(seconds)
  const assetBytes = new Float64Array(seconds)
  /** @param {number} second @returns {number} its slot, or -1 if the slot holds another second */
  const slotOf = (second) => {
    const i = second % seconds
    return stamps[i] === second ? i : -1
  }
  return {
    /**
     * Count one response in the current second.
     * @param {number} sent body bytes
     * @param {boolean} asset whether it was a manifest asset
     */
    add (sent, asset) {
      const second = Math.floor(now() / 1000)
      let i = slotOf(second)
      if (i === -1) {
        // The slot last held a second that has left the window: reuse it.
        i = second % seconds
        stamps[i] = second
        requests[i] = bytes[i] = assetBytes[i] = 0
      }
      requests[i]++
      bytes[i] += sent
      if (asset) assetBytes[i] += sent
    },
    /** @returns {OriginHistory} the last `seconds`, zeros where nothing was served */
    series () {
      const latest = Math.floor(now() / 1000)
      /** @type {OriginHistory} */
      const out = { intervalMs: 1000, end: latest * 1000, requests: [], bytes: [], assetBytes: [] }
      for (let second = latest - seconds + 1; second <= latest; second++) {
        const i = second >= 0 ? slotOf(second) : -1
        out.requests.push(i === -1 ? 0 : requests[i])
        out.bytes.push(i === -1 ? 0 : bytes[i])
        out.assetBytes.push(i === -1 ? 0 : assetBytes[i])
      }
      return out
    },
    /** Forget every second. */
    clear () {
      stamps.fill(-1)
    }
  }
}
