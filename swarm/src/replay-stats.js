/**
 * What the replay origin has sent: responses and body bytes, in total, by
 * kind and per asset. This counter, not what visitors report, is the crowd's
 * measure of what Maygh saves. A response counts as a request when it
 * starts; its body bytes count as they leave (replay-site.js counts each
 * chunk when the socket has taken it), so a transfer cut short counts only
 * what was sent, and a reset during a transfer leaves the rest of it to the
 * new counts.
 */

/**
 * Kinds of response: `view` the replay's HTML pages; `asset` static assets
 * but media; `media` audio and video; `other` the log's other URLs
 * (downloads, CGI output); `maygh` the client's bundles and the manifest (the
 * cost of running Maygh itself); `error` answers to paths or methods the site
 * does not serve.
 */
export const KINDS = Object.freeze(/** @type {const} */ (['view', 'asset', 'media', 'other', 'maygh', 'error']))

/**
 * @typedef {typeof KINDS[number]} Kind
 * @typedef {{ requests: number, bytes: number }} Counter
 * @typedef {object} ReplayStats
 * @property {number} requests every response
 * @property {number} bytes every response's body bytes sent
 * @property {number} notModified 304 responses (in `requests`, 0 bytes)
 * @property {number} aborted responses whose body was cut short (the client went away)
 * @property {Record<Kind, Counter>} byKind
 * @property {Record<string, Counter>} byAsset assets and media by the path the caller gave, counted by GET and HEAD (304s included)
 */

/**
 * A fresh set of counters.
 */
export function createReplayStats () {
  /** @type {ReplayStats} */
  let s = empty()
  return {
    /**
     * Count a response starting.
     * @param {Kind} kind
     * @param {string} [asset] the asset's path, for `asset` and `media`
     * @param {boolean} [notModified] a 304
     * @returns {(bytes: number) => void} counts body bytes as they are sent (into the counters current then)
     */
    start (kind, asset, notModified = false) {
      s.requests++
      s.byKind[kind].requests++
      if (notModified) s.notModified++
      if (asset !== undefined) counter(s, asset).requests++
      return (bytes) => {
        s.bytes += bytes
        s.byKind[kind].bytes += bytes
        if (asset !== undefined) counter(s, asset).bytes += bytes
      }
    },
    /** Count a response whose body was cut short. */
    aborted () {
      s.aborted++
    },
    /** @returns {ReplayStats} a copy */
    snapshot () {
      return structuredClone(s)
    },
    /** Zero everything. */
    reset () {
      s = empty()
    }
  }
}

/**
 * @param {ReplayStats} s
 * @param {string} asset
 * @returns {Counter}
 */
function counter (s, asset) {
  return (s.byAsset[asset] ??= { requests: 0, bytes: 0 })
}

/** @returns {ReplayStats} */
function empty () {
  const byKind = /** @type {Record<Kind, Counter>} */ (Object.fromEntries(KINDS.map((k) => [k, { requests: 0, bytes: 0 }])))
  return { requests: 0, bytes: 0, notModified: 0, aborted: 0, byKind, byAsset: {} }
}
