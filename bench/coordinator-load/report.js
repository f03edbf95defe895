/**
 * The bench's one JSON line, from the phases' raw results: totals over the
 * workers, merged latency percentiles, CPU and memory figures, rounded.
 */
import { mergedQuantiles } from './latency.js'

/**
 * @typedef {object} TrafficResult phase 2, as measured
 * @property {import('./traffic.js').TrafficSummary[]} summaries one per load worker
 * @property {number} wallS how long the phase took, tail included
 * @property {number[]} serverCpuEach CPU seconds of each coordinator process
 * @property {number} redisCpuS CPU seconds of all the Redis servers
 * @property {number} loadGenCpuS CPU seconds of the bench process, workers included
 * @property {number} otherCpuS CPU seconds of every other process on the machine
 * @property {number} stealCpuS CPU seconds the hypervisor took from this machine
 * @property {number} signals relayed `connect`s the load clients received
 * @property {import('./flood.js').FloodResult | null} flood
 *
 * @typedef {object} IdleResult phase 3
 * @property {number} bytesPerClient growth of the coordinators' resident memory per idle client
 * @property {number} redisBytesPerClient the same for the Redis servers
 */

/** @param {number[]} values @returns {number} */
const sum = (values) => values.reduce((a, b) => a + b, 0)

/**
 * @param {number} value
 * @param {number} digits
 * @returns {number}
 */
function round (value, digits) {
  const scale = 10 ** digits
  return Math.round(value * scale) / scale
}

/**
 * @param {import('./flood.js').FloodResult} flood
 * @returns {object} the flooding client's figures, named for the JSON line
 */
function floodFigures ({ sent, received, closedAfterS, closeCode }) {
  return {
    flood: true,
    floodSent: sent,
    floodReplies: received,
    // when the coordinator cut the flooding client off (null: it never did)
    floodClosedAfterS: closedAfterS === null ? null : round(closedAfterS, 2),
    floodCloseCode: closeCode
  }
}

/**
 * The JSON line: the load clients' figures (never the flooding client's).
 *
 * @param {Readonly<import('./options.js').Options>} options
 * @param {TrafficResult} traffic
 * @param {IdleResult | null} idle null when phase 3 was skipped
 * @returns {object}
 */
export function report (options, traffic, idle) {
  const { summaries, wallS, serverCpuEach, redisCpuS } = traffic
  const completed = sum(summaries.map((s) => s.completed))
  /** @type {Record<string, number>} */
  const errorCodes = {}
  for (const s of summaries) for (const [code, n] of Object.entries(s.errors)) errorCodes[code] = (errorCodes[code] ?? 0) + n
  const [p50, p99] = mergedQuantiles(summaries.map((s) => s.latency), [0.5, 0.99])
  const serverCpuS = sum(serverCpuEach)
  return {
    server: options.server,
    processes: options.processes,
    store: options.store,
    clients: options.clients,
    seconds: options.seconds,
    warmup: options.warmup,
    workers: options.workers,
    ...(options.rate === null ? {} : { rate: options.rate, behind: sum(summaries.map((s) => s.behind)) }),
    ...(traffic.flood === null ? {} : floodFigures(traffic.flood)),
    peerRateLimit: options.peerRateLimit,
    transactions: completed,
    tps: Math.round(completed / wallS),
    tpsPerCoreS: serverCpuS > 0 ? Math.round(completed / serverCpuS) : null,
    p50Ms: round(p50, 2),
    p99Ms: round(p99, 2),
    maxMs: round(Math.max(...summaries.map((s) => s.latency.max)), 2),
    errors: sum(Object.values(errorCodes)),
    ...(Object.keys(errorCodes).length === 0 ? {} : { errorCodes }),
    misses: sum(summaries.map((s) => s.misses)),
    connects: sum(summaries.map((s) => s.connects)),
    signalsReceived: traffic.signals,
    idle: options.idle,
    bytesPerClient: idle === null ? null : Math.round(idle.bytesPerClient),
    redisBytesPerClient: idle === null ? null : Math.round(idle.redisBytesPerClient),
    serverCpuS: round(serverCpuS, 2),
    serverCpuSEach: serverCpuEach.map((s) => round(s, 2)),
    redisCpuS: round(redisCpuS, 2),
    loadGenCpuS: round(traffic.loadGenCpuS, 2),
    otherCpuS: round(traffic.otherCpuS, 2),
    stealCpuS: round(traffic.stealCpuS, 2)
  }
}
