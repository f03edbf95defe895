/**
 * What held the coordinators' event loops up during a measured window, read
 * from their own `/metrics` (prom-client's process metrics; the bare server
 * serves the same names): the loop's delay
 * (p99 and max of `monitorEventLoopDelay`, which each scrape resets) and the
 * seconds spent collecting garbage, by kind. What a p99 far above the p50
 * comes from: a loop held up by the coordinator's own work or collections
 * shows here, a process that waited for a core does not.
 */

/**
 * @typedef {object} LoopSample one coordinator's scrape
 * @property {number} lagP99Ms the loop's delay since the last scrape, p99
 * @property {number} lagMaxMs the same, the longest
 * @property {Record<string, number>} gcS seconds collecting garbage since the process started, by kind (major, minor, incremental, weakcb)
 *
 * @typedef {object} LoopStats over a window, all coordinators
 * @property {number} loopLagP99Ms the highest of their p99s
 * @property {number} loopLagMaxMs the longest delay of any
 * @property {number} gcS seconds collecting garbage, all kinds, summed
 * @property {number} gcMajorS of them, full (mark-compact) collections
 */

/**
 * @param {string} text a Prometheus exposition
 * @returns {LoopSample}
 */
export function parseLoopSample (text) {
  /** @type {LoopSample} */
  const sample = { lagP99Ms: 0, lagMaxMs: 0, gcS: {} }
  for (const line of text.split('\n')) {
    const m = /^(nodejs_eventloop_lag_p99_seconds|nodejs_eventloop_lag_max_seconds|nodejs_gc_duration_seconds_sum)(?:\{([^}]*)\})? (\S+)$/.exec(line)
    if (m === null) continue
    const value = Number(m[3])
    if (m[1] === 'nodejs_eventloop_lag_p99_seconds') sample.lagP99Ms = value * 1000
    else if (m[1] === 'nodejs_eventloop_lag_max_seconds') sample.lagMaxMs = value * 1000
    else {
      const kind = /kind="([^"]*)"/.exec(m[2] ?? '')?.[1] ?? 'all'
      sample.gcS[kind] = (sample.gcS[kind] ?? 0) + value
    }
  }
  return sample
}

/**
 * @param {string[]} urls the coordinators' `/metrics`
 * @returns {Promise<LoopSample[]>}
 */
export async function scrapeLoops (urls) {
  return Promise.all(urls.map(async (url) => parseLoopSample(await (await fetch(url)).text())))
}

/**
 * @param {LoopSample[]} before scraped as the window began (which reset the delay histograms)
 * @param {LoopSample[]} after scraped as it ended
 * @returns {LoopStats}
 */
export function loopStats (before, after) {
  let gcS = 0
  let gcMajorS = 0
  after.forEach((a, i) => {
    for (const [kind, total] of Object.entries(a.gcS)) {
      const spent = total - (before[i].gcS[kind] ?? 0)
      gcS += spent
      if (kind === 'major') gcMajorS += spent
    }
  })
  return {
    loopLagP99Ms: Math.max(...after.map((a) => a.lagP99Ms)),
    loopLagMaxMs: Math.max(...after.map((a) => a.lagMaxMs)),
    gcS,
    gcMajorS
  }
}
