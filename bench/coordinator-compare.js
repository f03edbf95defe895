#!/usr/bin/env node
/**
 * The coordinator side by side with the signalling servers people run today
 * (WebTorrent's tracker, `bittorrent-tracker`, and PeerJS's server, `peer`)
 * and with the floor (a bare `ws` server sending the same frames), on the
 * same work, in one run of three phases. Each run is one run of the load
 * generator (coordinator-load.js), a process of its own.
 *
 * 1. Throughput, per workload, each server as fast as it goes (closed loop),
 *    `--rounds` times, the order rotated each round so that a machine that
 *    slows down or speeds up weighs on all alike; each ratio is taken within
 *    a round, then summarised over the rounds:
 *      transaction  find a holder and deliver an offer, then swap an asset (the
 *                   tracker's announce with an offer): the coordinator on the
 *                   in-process store and on Redis, bittorrent-tracker, bare ws;
 *      page         a page view of the demo shop, on a socket of its own: the same four;
 *      relay        relay only: the coordinator (both stores), peerjs-server, bare ws.
 * 2. Latency at half load: at half the coordinator's (in-process store)
 *    median maximum rate (transactions/s, wall) in the transaction workload,
 *    the coordinator, the bare server and the tracker (for information) each
 *    at that fixed rate (open loop), in turns, `--rounds` times: p50, p99 and
 *    the coordinator's p99 over the bare server's, per round; and its
 *    transactions per core-second over each other server's at that same
 *    offered load (`perCoreRatios`), beside the closed loop's of phase 1.
 * 3. Memory per idle client: one run per server, `--idle` clients joined to a
 *    freshly started server (coordinator/redis: the coordinator's and Redis's bytes;
 *    peerjs-server keeps no content map: its clients only connect).
 *
 *   npm run bench:compare -- [--rounds R] [--seconds S] [--warmup S] [--idle I] [--rate R]
 *                            [--workload W] [--no-redis] [--signal offer|connect] [--page-clients N] [--phases …]
 *
 * Defaults (3 rounds, 6 s measured + 2 s warm-up a run, 10,000 idle clients):
 * 36 + 9 + 5 runs, 14 minutes on this 2-core machine while other benchmarks
 * shared it (a run of the load generator spends 5–20 s starting its server
 * and joining its clients besides its 8 s of load).
 * A run that fails (a server that does not start or ends, a load generator
 * that fails or takes too long) is reported as such for that server and round,
 * and the rest go on; a failed transaction is counted by code, never fatal.
 * Prints progress on stderr and one JSON line on stdout: the machine's speed
 * before and after (`machine`, bench/machine-speed.js), per workload, per
 * server, min / median / max of each figure with its transactions and errors;
 * the ratios; the latency and memory phases; and `targets`, each target of
 * issue 25 with its measured median ratio and whether it is met.
 */
import { checkRuns, latencyServers, latencyWorkload, memoryArgs, memoryServers, OURS, parseFlags, SERVERS, serversOf, USAGE, workloadArgs } from './coordinator-load/compare-options.js'
import { runLoad, stopRunning } from './coordinator-load/compare-run.js'
import { UsageError } from './coordinator-load/options.js'
import { round, roundRatios, spread, summariseRuns, target } from './coordinator-load/compare-summary.js'
import { machineSpeedSpan } from './machine-speed.js'

/** @typedef {import('./coordinator-load/compare-summary.js').Run} Run */
/** @typedef {import('./coordinator-load/compare-options.js').Workload} Workload */
/** @typedef {import('./coordinator-load/compare-options.js').ServerName} ServerName */
/** @typedef {import('./coordinator-load/compare-options.js').Flags} Flags */

/** How long a load-generator run may take beyond its own measured and warm-up seconds, before it is stopped. */
const RUN_MARGIN_S = 90
/** …and per idle client it joins (a join of 3 assets costs the tracker 3 announces). */
const RUN_S_PER_IDLE = 0.01

/** @param {string} message */
function log (message) {
  process.stderr.write(`coordinator-compare: ${message}\n`)
}

/** Counts the runs for the progress lines. */
const progress = { done: 0, total: 0, started: performance.now() }

/**
 * @param {string} label
 * @param {string[]} args
 * @param {number} timeoutS
 * @param {number} roundIndex
 * @returns {Promise<Run>}
 */
async function measure (label, args, timeoutS, roundIndex) {
  const { figures, failure } = await runLoad(args, timeoutS)
  progress.done++
  const elapsed = Math.round((performance.now() - progress.started) / 1000)
  const what = figures === null
    ? `FAILED (${failure})`
    : figures.bytesPerClient !== null
      ? `${figures.bytesPerClient} bytes per idle client${figures.redisBytesPerClient ? ` + ${figures.redisBytesPerClient} in Redis` : ''}`
      : `${figures.tpsPerCoreS} per core-second, ${figures.tps}/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, ${figures.errors} errors${figures.errors > 0 ? ` ${JSON.stringify(figures.errorCodes)}` : ''}${figures.behind ? `, ${figures.behind} behind` : ''}`
  log(`[${progress.done}/${progress.total}, ${Math.floor(elapsed / 60)}m${String(elapsed % 60).padStart(2, '0')}s] ${label}: ${what}`)
  return { round: roundIndex, figures, failure }
}

/**
 * `rounds` rounds of every server in `servers`, the order rotated each round.
 *
 * @param {Flags} flags
 * @param {string} label
 * @param {ServerName[]} servers
 * @param {string[]} args
 * @returns {Promise<Map<ServerName, Run[]>>}
 */
async function inRounds (flags, label, servers, args) {
  const timeoutS = RUN_MARGIN_S + 2 * (Number(flags.seconds) + Number(flags.warmup))
  /** @type {Map<ServerName, Run[]>} */
  const runs = new Map(servers.map((s) => [s, []]))
  for (let r = 0; r < flags.rounds; r++) {
    // Rotated, so that no server always runs first (a cold machine) or last.
    for (const server of servers.map((_, i) => servers[(i + r) % servers.length])) {
      const done = /** @type {Run[]} */ (runs.get(server))
      done.push(await measure(`${label}, round ${r + 1}/${flags.rounds}, ${server}`, [...SERVERS[server], ...args], timeoutS, r + 1))
    }
  }
  return runs
}

/**
 * @param {Map<ServerName, Run[]>} runs
 * @param {typeof import('./coordinator-load/compare-summary.js').FIGURES[number][]} figures
 * @returns {Record<string, Record<string, import('./coordinator-load/compare-summary.js').Spread | null>>} ours over each other server's, per round, summarised
 */
function ratiosOf (runs, figures) {
  /** @type {Record<string, Record<string, import('./coordinator-load/compare-summary.js').Spread | null>>} */
  const ratios = {}
  for (const ours of OURS.filter((s) => runs.has(s))) {
    for (const other of [...runs.keys()].filter((s) => !OURS.includes(s))) {
      ratios[`${ours} / ${other}`] = Object.fromEntries(figures.map((f) => [f, spread(roundRatios(/** @type {Run[]} */ (runs.get(ours)), /** @type {Run[]} */ (runs.get(other)), f))]))
    }
  }
  return ratios
}

/**
 * @param {Flags} flags
 * @returns {Promise<Partial<Record<Workload, { runs: Map<ServerName, Run[]>, report: object }>>>}
 */
async function throughputPhase (flags) {
  /** @type {Partial<Record<Workload, { runs: Map<ServerName, Run[]>, report: object }>>} */
  const results = {}
  for (const workload of flags.workloads) {
    const runs = await inRounds(flags, `throughput, ${workload}`, serversOf(flags, workload), workloadArgs(flags, workload, null))
    results[workload] = {
      runs,
      report: {
        servers: Object.fromEntries([...runs].map(([s, r]) => [s, summariseRuns(r)])),
        ratios: ratiosOf(runs, ['tpsPerCoreS', 'p99Ms'])
      }
    }
  }
  return results
}

/**
 * @param {Flags} flags
 * @param {Map<ServerName, Run[]> | undefined} maxima the throughput runs of the latency phase's workload
 * @returns {Promise<object>}
 */
async function latencyPhase (flags, maxima) {
  const workload = latencyWorkload(flags)
  const maxTps = spread((maxima?.get('coordinator/memory') ?? []).map((r) => r.figures?.tps))?.median ?? null
  const rate = flags.rate ?? (maxTps === null ? null : Math.max(1, Math.round(maxTps / 2)))
  if (rate === null) {
    progress.total -= flags.rounds * latencyServers(flags).length
    log('latency: skipped, no maximum rate of coordinator/memory was measured')
    return { workload, skipped: 'no maximum rate of coordinator/memory was measured' }
  }
  const runs = await inRounds(flags, `latency, ${workload} at ${rate}/s`, latencyServers(flags), workloadArgs(flags, workload, rate))
  const ours = /** @type {Run[]} */ (runs.get('coordinator/memory'))
  /** @type {Record<string, object>} */
  const p99Ratios = {}
  // Transactions per server core-second at the same offered load: unlike the throughput phase's closed
  // loop, in which a server that is not saturated waits on the load generator (whose own speed differs
  // with each server's client), every server here is given the same transactions to do.
  /** @type {Record<string, object>} */
  const perCoreRatios = {}
  for (const other of latencyServers(flags).slice(1)) {
    const byRound = roundRatios(ours, /** @type {Run[]} */ (runs.get(other)), 'p99Ms')
    p99Ratios[`coordinator/memory / ${other}`] = { byRound, ...spread(byRound) }
    const perCore = roundRatios(ours, /** @type {Run[]} */ (runs.get(other)), 'tpsPerCoreS')
    perCoreRatios[`coordinator/memory / ${other}`] = { byRound: perCore, ...spread(perCore) }
  }
  return {
    workload,
    rate,
    rateFrom: flags.rate === null ? `half coordinator/memory's median maximum, ${maxTps}/s` : '--rate',
    servers: Object.fromEntries([...runs].map(([s, r]) => [s, summariseRuns(r)])),
    p99Ratios,
    perCoreRatios
  }
}

/**
 * @param {Flags} flags
 * @returns {Promise<object>}
 */
async function memoryPhase (flags) {
  const timeoutS = RUN_MARGIN_S + RUN_S_PER_IDLE * flags.idle
  /** @type {Record<string, object>} */
  const servers = {}
  /** @type {Map<ServerName, number>} bytes per idle client, Redis's included */
  const bytes = new Map()
  for (const server of memoryServers(flags)) {
    const { figures, failure } = await measure(`memory, ${flags.idle} idle clients, ${server}`, memoryArgs(flags, server), timeoutS, 1)
    if (figures === null || figures.bytesPerClient === null) {
      servers[server] = { failed: failure }
      continue
    }
    const inRedis = server === 'coordinator/redis' ? figures.redisBytesPerClient ?? 0 : 0
    servers[server] = { bytesPerClient: figures.bytesPerClient, ...(server === 'coordinator/redis' ? { redisBytesPerClient: inRedis } : {}) }
    bytes.set(server, figures.bytesPerClient + inRedis)
  }
  /** @type {Record<string, number>} */
  const ratios = {}
  for (const ours of OURS.filter((s) => bytes.has(s))) {
    for (const [other, b] of bytes) if (!OURS.includes(other) && b > 0) ratios[`${ours} / ${other}`] = round(/** @type {number} */ (bytes.get(ours)) / b)
  }
  return { idle: flags.idle, servers, ratios }
}

/**
 * Issue 25's targets, each with the measured median ratio (null where it was not measured).
 *
 * @param {Record<string, any>} workloads
 * @param {any} latency
 * @param {any} memory
 * @returns {Record<string, object>}
 */
function targetsOf (workloads, latency, memory) {
  const perCoreS = (/** @type {Workload} */ w, /** @type {string} */ pair) => workloads[w]?.ratios[pair]?.tpsPerCoreS?.median
  return {
    transactionMemoryVsTracker: { of: 'transaction tpsPerCoreS, coordinator/memory / bittorrent-tracker', ...target(perCoreS('transaction', 'coordinator/memory / bittorrent-tracker'), { atLeast: 1.2 }) },
    transactionRedisVsTracker: { of: 'transaction tpsPerCoreS, coordinator/redis / bittorrent-tracker', ...target(perCoreS('transaction', 'coordinator/redis / bittorrent-tracker'), { atLeast: 1.0 }) },
    transactionMemoryVsBare: { of: 'transaction tpsPerCoreS, coordinator/memory / bare ws', ...target(perCoreS('transaction', 'coordinator/memory / bare ws'), { atLeast: 0.8 }) },
    relayVsPeerjs: { of: 'relay tpsPerCoreS, coordinator/memory / peerjs-server', ...target(perCoreS('relay', 'coordinator/memory / peerjs-server'), { atLeast: 1.0 }) },
    pageVsTracker: { of: 'page views per core-second, coordinator/memory / bittorrent-tracker', ...target(perCoreS('page', 'coordinator/memory / bittorrent-tracker'), { atLeast: 5 }) },
    p99AtHalfLoadVsBare: { of: `${latency?.workload} p99 at ${latency?.rate ?? '?'}/s, coordinator/memory / bare ws`, ...target(latency?.p99Ratios?.['coordinator/memory / bare ws']?.median, { atMost: 2 }) },
    idleMemoryVsTracker: { of: 'bytes per idle client, coordinator/memory / bittorrent-tracker', ...target(memory?.ratios['coordinator/memory / bittorrent-tracker'], { atMost: 1 }) }
  }
}

async function main () {
  let flags
  try {
    flags = parseFlags(process.argv.slice(2))
    if (flags === null) {
      process.stdout.write(USAGE)
      return
    }
    checkRuns(flags)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    log(`${err.message} (see --help)`)
    process.exitCode = 2
    return
  }
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
    process.once(signal, () => {
      log(`${signal}: stopping`)
      stopRunning().then(() => process.exit(130))
    })
  }
  const has = (/** @type {string} */ phase) => flags.phases.includes(phase)
  // The machine's speed before and after, beside the figures.
  const speedEnd = machineSpeedSpan(log)
  progress.total = (has('throughput') ? flags.rounds * flags.workloads.reduce((n, w) => n + serversOf(flags, w).length, 0) : 0) +
    (has('latency') ? flags.rounds * latencyServers(flags).length : 0) + (has('memory') ? memoryServers(flags).length : 0)
  const throughput = has('throughput') ? await throughputPhase(flags) : {}
  const latency = has('latency') ? await latencyPhase(flags, throughput[latencyWorkload(flags)]?.runs) : null
  const memory = has('memory') ? await memoryPhase(flags) : null
  const workloads = Object.fromEntries(Object.entries(throughput).map(([w, { report }]) => [w, report]))
  const machine = speedEnd()
  console.log(JSON.stringify({
    rounds: flags.rounds,
    seconds: Number(flags.seconds),
    warmup: Number(flags.warmup),
    idle: flags.idle,
    redis: flags.redis,
    signal: flags.signal ?? 'offer',
    durationS: Math.round((performance.now() - progress.started) / 1000),
    machine,
    workloads,
    latency,
    memory,
    targets: targetsOf(workloads, latency, memory)
  }))
}

await main()
