/**
 * The human summary `maygh-sim` prints without --json: what was read, what
 * was counted, the totals by source, savings, upload, coordinator load and
 * any sweeps.
 */
import { formatBytes, formatCount, formatPercent, formatRate, textTable } from './format.js'
import { countedText, orderText } from './input-facts.js'

/**
 * Lines on what was counted and how time order was handled.
 * @param {Record<string, any>} r
 * @returns {string[]}
 */
function inputLines (r) {
  const { counted, leftOut } = countedText(r)
  const order = orderText(r)
  return [counted, leftOut, ...(order ? [order] : [])]
}

/**
 * Lines on the real client's behaviours: page views and joins, what went to
 * the origin without asking peers, the race with the origin, reports,
 * quarantines and upload budgets.
 * @param {Record<string, any>} r
 * @returns {string[]}
 */
function clientLines (r) {
  const c = r.coordinator
  return [
    `client: ${formatCount(r.pageViews)} page views, ${formatCount(c.joins)} joins; from the origin without asking peers: ` +
      `first page views ${formatCount(r.firstPage.requests)} requests, ${formatBytes(r.firstPage.bytes)}; audio/video ${formatCount(r.media.requests)} requests, ${formatBytes(r.media.bytes)}`,
    `lookups ${formatCount(c.lookups)} (${formatCount(c.lookupHits)} named a holder); races lost to the origin ${formatCount(r.hedge.racesLost)}; ` +
      `set-ups shared by a page's loads ${formatCount(r.connections.setupsShared)}`,
    `reports (no_channel) ${formatCount(r.reports.sent)} sent, ${formatCount(r.reports.counted)} counted toward quarantine; ` +
      `quarantines ${formatCount(r.reports.quarantines)} (${formatCount(r.reports.quarantinedClients)} clients); ` +
      `upload budget spent ${formatCount(r.uploadBudget.sessionStops)} times in a session, ${formatCount(r.uploadBudget.dayStops)} in a day`
  ]
}

/**
 * The human summary printed without --json.
 * @param {Record<string, any>} r
 * @returns {string}
 */
export function summaryText (r) {
  const input = r.input
  const what = input.kind === 'trace'
    ? `${input.file} (${input.format}${input.compression !== 'none' ? `, ${input.compression}` : ''}): ${formatCount(input.lines)} lines, ${formatCount(input.badLines)} bad`
    : `synthetic Etsy-like trace, ${input.params.days} days, seed ${input.params.seed}`
  const share = (/** @type {number} */ x) => formatPercent(r.bytes > 0 ? x / r.bytes : 0)
  const out = [
    `maygh-sim: ${what}`,
    `${formatCount(r.requests)} requests from ${formatCount(r.clients)} clients for ${formatCount(r.objects)} objects over ${(r.traceSeconds / 86400).toFixed(2)} days`,
    ...inputLines(r),
    '',
    textTable(['', 'requests', 'bytes', 'share'], [
      ['total (origin, per the log)', formatCount(r.requests), formatBytes(r.bytes), '100.0%'],
      ['origin with Maygh', formatCount(r.originRequests), formatBytes(r.originBytes), share(r.originBytes)],
      ['peers', formatCount(r.peerRequests), formatBytes(r.peerBytes), share(r.peerBytes)],
      ['own store', formatCount(r.cacheRequests), formatBytes(r.cacheBytes), share(r.cacheBytes)]
    ]),
    '',
    `savings ${formatPercent(r.savings)} (peers ${formatPercent(r.peerSavings)}, own store ${formatPercent(r.cacheSavings)}); ` +
      `oracle bound ${formatPercent(r.oracleSavings)}` +
      (r.plugin ? `; plug-in baseline at ${formatPercent(r.plugin.adoption, 0)} adoption ${formatPercent(r.pluginSavings)}` : ''),
    ...(input.kind === 'trace' ? ['(a sampled log understates savings: docs/simulator.md, "Sampled logs")'] : []),
    `upload: max ${formatBytes(r.fairness.maxBytes)}, p99 ${formatBytes(r.fairness.p99Bytes)}, Gini ${r.fairness.gini.toFixed(2)}; ` +
      `connections: ${formatCount(r.connections.attempts)} new, ${formatCount(r.connections.failures)} failed, ${formatCount(r.connections.reused)} reused`,
    ...clientLines(r),
    `coordinator: lookups ${formatRate(r.coordinator.lookupsPerSecond.mean)}/s mean, ${formatCount(r.coordinator.lookupsPerSecond.peak)}/s peak; ` +
      `updates ${formatRate(r.coordinator.updatesPerSecond.mean)}/s mean, ${formatCount(r.coordinator.updatesPerSecond.peak)}/s peak; ` +
      `joins ${formatCount(r.coordinator.joinsPerSecond.peak)}/s peak`
  ]
  if (input.badExamples?.length) {
    out.push(`bad lines (first ${input.badExamples.length}):`)
    for (const b of input.badExamples) out.push(`  line ${b.line}: ${b.text}`)
  }
  for (const s of r.sweeps) {
    out.push('', `sweep of ${s.param}:`, textTable([s.param, 'savings', 'peers', 'own store', 'oracle'],
      s.rows.map((/** @type {any} */ row) => [row.label, formatPercent(row.savings), formatPercent(row.peerSavings), formatPercent(row.cacheSavings), formatPercent(row.oracleSavings)])))
  }
  out.push('', `replayed in ${r.elapsedSeconds.toFixed(1)} s (${formatCount(r.requestsPerSecond)} requests/s)`)
  return out.join('\n') + '\n'
}
