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
 * @property {{ attempts: number, failures: number, reused: number, setupRefusals: number, setupsShared: number }} connections
 *   setupsShared: tries that waited for a set-up an earlier load of the page had started
 * @property {number} pageViews page views of adopters (page-views.js)
 * @property {{ requests: number, bytes: number }} firstPage asset requests of visitors' first page views, from the origin
 * @property {{ requests: number, bytes: number }} media audio and video requests, from the origin
 * @property {{ racesLost: number }} hedge peer tries the origin would beat (the client asks those holders nothing: hedge-rule.js outrun)
 * @property {{ sent: number, counted: number, quarantines: number, quarantinedClients: number }} reports
 *   `no_channel` reports sent, those that counted toward quarantine, quarantines, distinct clients quarantined
 * @property {{ sessionStops: number, dayStops: number }} uploadBudget times a client stopped serving, its session's or its day's budget spent
 * @property {{ evictions: number, tooBig: number, entries: number }} store
 * @property {{ lookups: number, lookupHits: number, updates: number, joins: number, joinHoldings: number,
 *   lookupsPerSecond: { mean: number, peak: number }, updatesPerSecond: { mean: number, peak: number },
 *   joinsPerSecond: { mean: number, peak: number } }} coordinator
 * @property {ReturnType<typeof uploadFairness>} fairness
 * @property {ReturnType<import('./metrics.js').HourlySeries['toJSON']>} hourly
 */

/**
 * What a replay counts, from which `engineResult` derives the rest: the
 * engine (engine.js) and the reference model (reference-model.js) both keep
 * these, each its own way.
 * @typedef {object} Tallies
 * @property {string} label
 * @property {number} adoption
 * @property {number} requests
 * @property {number} bytes
 * @property {number} originRequests
 * @property {number} originBytes
 * @property {number} peerRequests
 * @property {number} peerBytes
 * @property {number} cacheRequests
 * @property {number} cacheBytes
 * @property {number} assetRequests
 * @property {number} assetBytes
 * @property {number} oracleRequests
 * @property {number} oracleBytes
 * @property {number} objectsSeen one more than the largest object id seen
 * @property {number} firstTs
 * @property {number} lastTs
 * @property {number} attempts new peer connections tried
 * @property {number} failures
 * @property {number} reused lookups served over a channel already open
 * @property {number} setupRefusals holders passed over because they would leave during set-up
 * @property {number} evictions
 * @property {number} tooBig objects larger than the quota, not stored
 * @property {number} entries objects held in all stores at the end
 * @property {number} lookupHits lookups that returned a holder
 * @property {number} joinHave holdings listed by joins
 * @property {number} pageViews
 * @property {number} firstPageRequests
 * @property {number} firstPageBytes
 * @property {number} mediaRequests
 * @property {number} mediaBytes
 * @property {number} setupsShared
 * @property {number} racesLost
 * @property {number} reportsSent
 * @property {number} reportsCounted
 * @property {number} quarantines
 * @property {number} quarantinedClients
 * @property {number} sessionBudgetStops
 * @property {number} dayBudgetStops
 * @property {ArrayLike<number>} seen per client id: 0 unseen, 1 adopter, 2 not an adopter
 * @property {Float64Array} uploaded per client id (at least as long as `seen`): bytes served to peers
 * @property {import('./metrics.js').ReplayMeters} meters lookups, updates and joins per second; the hourly series
 */

/** The counters of {@link Tallies}: the numbers a replay starts at 0 and counts up (the reference model keeps them by name). */
export const TALLY_COUNTERS = Object.freeze(['requests', 'bytes', 'originRequests', 'originBytes', 'peerRequests', 'peerBytes',
  'cacheRequests', 'cacheBytes', 'assetRequests', 'assetBytes', 'oracleRequests', 'oracleBytes', 'objectsSeen',
  'attempts', 'failures', 'reused', 'setupRefusals', 'evictions', 'tooBig', 'lookupHits', 'joinHave',
  'pageViews', 'firstPageRequests', 'firstPageBytes', 'mediaRequests', 'mediaBytes', 'setupsShared', 'racesLost',
  'reportsSent', 'reportsCounted', 'quarantines', 'quarantinedClients', 'sessionBudgetStops', 'dayBudgetStops'])

/**
 * @param {Tallies} e
 * @returns {EngineResult}
 */
export function engineResult (e) {
  const span = e.requests ? Math.max(1, e.lastTs - e.firstTs) : 0
  let clients = 0
  let adopters = 0
  const n = e.seen.length
  const participated = new Uint8Array(n)
  for (let c = 0; c < n; c++) {
    if (e.seen[c] === 0) continue
    clients++
    if (e.seen[c] === 1) {
      adopters++
      participated[c] = 1
    }
  }
  const ratio = (/** @type {number} */ x) => (e.bytes > 0 ? x / e.bytes : 0)
  const perSecond = (/** @type {import('./metrics.js').PeakRate} */ r) => ({ mean: span ? r.total / span : 0, peak: r.peak })
  const { lookups, updates, joins, hourly } = e.meters
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
    connections: { attempts: e.attempts, failures: e.failures, reused: e.reused, setupRefusals: e.setupRefusals, setupsShared: e.setupsShared },
    pageViews: e.pageViews,
    firstPage: { requests: e.firstPageRequests, bytes: e.firstPageBytes },
    media: { requests: e.mediaRequests, bytes: e.mediaBytes },
    hedge: { racesLost: e.racesLost },
    reports: { sent: e.reportsSent, counted: e.reportsCounted, quarantines: e.quarantines, quarantinedClients: e.quarantinedClients },
    uploadBudget: { sessionStops: e.sessionBudgetStops, dayStops: e.dayBudgetStops },
    store: { evictions: e.evictions, tooBig: e.tooBig, entries: e.entries },
    coordinator: {
      lookups: lookups.total,
      lookupHits: e.lookupHits,
      updates: updates.total,
      joins: joins.total,
      joinHoldings: e.joinHave,
      lookupsPerSecond: perSecond(lookups),
      updatesPerSecond: perSecond(updates),
      joinsPerSecond: perSecond(joins)
    },
    fairness: uploadFairness(e.uploaded, participated, n),
    hourly: hourly.toJSON()
  }
}
