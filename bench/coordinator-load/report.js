/**
 * The bench's one JSON line, from the phases' raw results: totals over the
 * workers, merged latency percentiles, CPU and memory figures, rounded.
 */
import { mergedQuantiles } from './latency.js'

/**
 * @typedef {object} TrafficResult phase 2, as measured
 * @property {import('./traffic.js').TrafficSummary[]} summaries one per load worker and window (with --flood, the flooded windows)
 * @property {import('./traffic.js').TrafficSummary[]} baseline with --flood, the same for the windows without the flood; else empty
 * @property {number} wallS how long the phase took, tail included
 * @property {number[]} serverCpuEach CPU seconds of each coordinator process
 * @property {number} redisCpuS CPU seconds of all the Redis servers
 * @property {{ commands: number, bytesIn: number, bytesOut: number }} redisWork what the Redis servers did meanwhile
 *   (commands, and bytes on their client connections), the shards' beats included
 * @property {number} loadGenCpuS CPU seconds of the bench process, workers included
 * @property {number} otherCpuS CPU seconds of every other process on the machine
 * @property {number} stealCpuS CPU seconds the hypervisor took from this machine
 * @property {number} signals relayed `connect`s the load clients received
 * @property {import('./flood.js').FloodResult[]} floods one per flooded window
 * @property {import('./loop-stats.js').LoopStats | null} loops what held the servers' loops up (null: a server that does not say: the tracker, peerjs-server)
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
 * @param {import('./flood.js').FloodResult[]} floods one per flooded window
 * @param {import('./traffic.js').TrafficSummary[]} baseline the windows without the flood
 * @param {number} p99 the others' p99 beside the flood
 * @returns {object} the flooding clients' figures, and the others' latency without them, named for the JSON line
 */
function floodFigures (floods, baseline, p99) {
  const [baselineP50, baselineP99] = mergedQuantiles(baseline.map((s) => s.latency), [0.5, 0.99])
  return {
    flood: true,
    floodRounds: floods.length,
    floodSent: sum(floods.map((f) => f.sent)),
    floodReplies: sum(floods.map((f) => f.received)),
    // the replies the flooding clients got per second of flooding (the rate limit's nominal 200/s, reconnecting or not)
    floodRepliesPerS: round(sum(floods.map((f) => f.received)) / sum(floods.map((f) => f.seconds)), 1),
    floodReconnects: sum(floods.map((f) => f.reconnects)),
    floodRefused: sum(floods.map((f) => f.refused)),
    // when the coordinator cut each flooding client off (null: it never did)
    floodClosedAfterS: floods.map((f) => f.closedAfterS === null ? null : round(f.closedAfterS, 2)),
    floodCloseCodes: floods.map((f) => f.closeCode),
    baselineP50Ms: round(baselineP50, 2),
    baselineP99Ms: round(baselineP99, 2),
    // the others' p99 beside the floods over their p99 in the windows between
    floodP99Ratio: round(p99 / baselineP99, 2)
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
  const { summaries, baseline, wallS, serverCpuEach, redisCpuS, redisWork } = traffic
  // Counts and rates over every measured window; latency over the flooded ones alone with --flood.
  const windows = [...summaries, ...baseline]
  const completed = sum(windows.map((s) => s.completed))
  /** @type {Record<string, number>} */
  const errorCodes = {}
  for (const s of windows) for (const [code, n] of Object.entries(s.errors)) errorCodes[code] = (errorCodes[code] ?? 0) + n
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
    ...(options.rate === null ? {} : { rate: options.rate, behind: sum(windows.map((s) => s.behind)) }),
    ...(traffic.floods.length === 0 ? {} : floodFigures(traffic.floods, traffic.baseline, p99)),
    peerRateLimit: options.peerRateLimit,
    signal: options.server === 'bittorrent-tracker' ? 'announce' : options.workload === 'relay' ? 'candidate' : options.signal,
    workload: options.workload,
    ...(options.workload === 'page' ? { pageAssets: options.pageAssets, pageOffers: options.pageOffers } : {}),
    transactions: completed,
    tps: Math.round(completed / wallS),
    tpsPerCoreS: serverCpuS > 0 ? Math.round(completed / serverCpuS) : null,
    p50Ms: round(p50, 2),
    p99Ms: round(p99, 2),
    maxMs: round(Math.max(...summaries.map((s) => s.latency.max)), 2),
    errors: sum(Object.values(errorCodes)),
    ...(Object.keys(errorCodes).length === 0 ? {} : { errorCodes }),
    misses: sum(windows.map((s) => s.misses)),
    connects: sum(windows.map((s) => s.connects)),
    signalsReceived: traffic.signals,
    idle: options.idle,
    bytesPerClient: idle === null ? null : Math.round(idle.bytesPerClient),
    redisBytesPerClient: idle === null ? null : Math.round(idle.redisBytesPerClient),
    serverCpuS: round(serverCpuS, 2),
    serverCpuSEach: serverCpuEach.map((s) => round(s, 2)),
    redisCpuS: round(redisCpuS, 2),
    // Per transaction measured (the shards' beats, a few commands a second, included): what sizes Redis for a load.
    ...(options.store === 'memory' || completed === 0
      ? {}
      : {
          // Commands run inside the Lua scripts count, as Redis counts them: its work, not round trips.
          redisCommandsPerTx: round(redisWork.commands / completed, 2),
          redisBytesInPerTx: Math.round(redisWork.bytesIn / completed),
          redisBytesOutPerTx: Math.round(redisWork.bytesOut / completed),
          redisCpuUsPerTx: round(redisCpuS / completed * 1e6, 1)
        }),
    // The coordinators' own view of the window (loop-stats.js): none for the other servers.
    ...(traffic.loops === null
      ? {}
      : {
          serverLoopLagP99Ms: round(traffic.loops.loopLagP99Ms, 1),
          serverLoopLagMaxMs: round(traffic.loops.loopLagMaxMs, 1),
          serverGcS: round(traffic.loops.gcS, 3),
          serverMajorGcS: round(traffic.loops.gcMajorS, 3)
        }),
    loadGenCpuS: round(traffic.loadGenCpuS, 2),
    otherCpuS: round(traffic.otherCpuS, 2),
    stealCpuS: round(traffic.stealCpuS, 2)
  }
}
