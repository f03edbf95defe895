/**
 * What an engine reports at the end of a run: totals by source, savings, the
 * oracle bound, connections, stores, coordinator load, upload fairness and
 * the hourly series, as one plain object.
 */
import { uploadFairness } from './metrics.js'

/**
 * @typedef {object} EngineResult
 * @property {string} label 'maygh' or 'plugin'
 * @property {number} adoption
 * @property {number} requests
 * @property {number} bytes bytes the log says the origin sent
 * @property {number} originRequests
 * @property {number} originBytes
 * @property {number} peerRequests
 * @property {number} peerBytes
 * @property {number} cacheRequests served from the client's own store
 * @property {number} cacheBytes
 * @property {number} assetRequests requests Maygh may serve
 * @property {number} assetBytes
 * @property {number} savings 1 − originBytes / bytes
 * @property {number} peerSavings
 * @property {number} cacheSavings
 * @property {number} oracleSavings
 * @property {number} oracleRequests
 * @property {number} oracleBytes
 * @property {number} clients
 * @property {number} adopters
 * @property {number} objects object ids seen are 0 … objects-1
 * @property {number} traceSeconds
 * @property {number} firstTs
 * @property {number} lastTs
 * @property {{ attempts: number, failures: number, reused: number, setupRefusals: number }} connections
 * @property {{ evictions: number, tooBig: number, entries: number }} store
 * @property {{ lookups: number, lookupHits: number, updates: number, joins: number, joinHoldings: number,
 *   lookupsPerSecond: { mean: number, peak: number }, updatesPerSecond: { mean: number, peak: number },
 *   joinsPerSecond: { mean: number, peak: number } }} coordinator
 * @property {ReturnType<typeof uploadFairness>} fairness
 * @property {ReturnType<import('./metrics.js').HourlySeries['toJSON']>} hourly
 */

/**
 * @param {import('./engine.js').Engine} e
 * @returns {EngineResult}
 */
export function engineResult (e) {
  const span = e.requests ? Math.max(1, e.lastTs - e.firstTs) : 0
  let clients = 0
  let adopters = 0
  const participated = new Uint8Array(e.clientCap)
  for (let c = 0; c < e.clientCap; c++) {
    if (e.seen[c] === 0) continue
    clients++
    if (e.seen[c] === 1) {
      adopters++
      participated[c] = 1
    }
  }
  const ratio = (/** @type {number} */ x) => (e.bytes > 0 ? x / e.bytes : 0)
  const perSecond = (/** @type {import('./metrics.js').PeakRate} */ r) => ({ mean: span ? r.total / span : 0, peak: r.peak })
  return {
    label: e.label,
    adoption: e.adoption,
    requests: e.requests,
    bytes: e.bytes,
    originRequests: e.originRequests,
    originBytes: e.originBytes,
    peerRequests: e.peerRequests,
    peerBytes: e.peerBytes,
    cacheRequests: e.cacheRequests,
    cacheBytes: e.cacheBytes,
    assetRequests: e.assetRequests,
    assetBytes: e.assetBytes,
    savings: ratio(e.peerBytes + e.cacheBytes),
    peerSavings: ratio(e.peerBytes),
    cacheSavings: ratio(e.cacheBytes),
    oracleSavings: ratio(e.oracleBytes),
    oracleRequests: e.oracleRequests,
    oracleBytes: e.oracleBytes,
    clients,
    adopters,
    objects: e.objectsSeen,
    traceSeconds: span,
    firstTs: e.firstTs,
    lastTs: e.lastTs,
    connections: { attempts: e.attempts, failures: e.failures, reused: e.reused, setupRefusals: e.setupRefusals },
    store: { evictions: e.evictions, tooBig: e.tooBig, entries: e.stores.live },
    coordinator: {
      lookups: e.lookups.total,
      lookupHits: e.lookupHits,
      updates: e.updates.total,
      joins: e.joins.total,
      joinHoldings: e.joinHave,
      lookupsPerSecond: perSecond(e.lookups),
      updatesPerSecond: perSecond(e.updates),
      joinsPerSecond: perSecond(e.joins)
    },
    fairness: uploadFairness(e.uploaded, participated, e.clientCap),
    hourly: e.hourly.toJSON()
  }
}
