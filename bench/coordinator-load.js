#!/usr/bin/env node
/**
 * Coordinator load generator: starts N coordinator processes on a store
 * (in-process, one Redis, or a Redis Cluster), then
 *   1. joins --clients clients spread evenly over them, each holding --have assets;
 *   2. after --warmup seconds unmeasured, runs transactions for --seconds
 *      (lookup → connect relay to the first holder → update swapping one
 *      asset), closed loop or at a fixed --rate, with an optional --flood
 *      client beside them; measures throughput, latency, and the CPU seconds
 *      of the coordinators and of Redis from /proc, and what held the
 *      coordinators' event loops up, from their own /metrics (their loop delay's
 *      p99 and max, seconds collecting garbage: serverLoopLag*, server*GcS);
 *   3. restarts the coordinators (a fresh heap is the fair baseline), joins
 *      --idle clients that stay idle, and measures the coordinators' resident
 *      memory per client, each reading after a forced full GC.
 * Prints one JSON line on stdout, progress on stderr. Bounded in time and
 * count, loopback only; everything it starts is stopped at the end, on error
 * and on Ctrl-C. Load comes from worker threads (worker.js), so the generator
 * is not one saturated event loop.
 *
 *   npm run bench:coordinator -- --processes N --seconds S --store memory|redis|cluster
 *
 * With --server bare, a bare `ws` server answering the same frames
 * (coordinator-load/bare-server.js) stands in for the coordinator: the floor
 * its figures compare with. With --server bittorrent-tracker, WebTorrent's
 * tracker does (coordinator-load/tracker-server.js), its clients running the
 * same transactions in its protocol (coordinator-load/tracker-client.js).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { checkFileLimit, parseOptions, UsageError, USAGE } from './coordinator-load/options.js'
import { redisCounts, startCoordinatorProcess, startStore } from './coordinator-load/services.js'
import { WorkerPool } from './coordinator-load/worker-pool.js'
import { loopStats, scrapeLoops } from './coordinator-load/loop-stats.js'
import { report } from './coordinator-load/report.js'
import { clockTicksPerSecond, cpuTicks, machineTicks, residentBytes } from './coordinator-load/procfs.js'

/** @typedef {import('./coordinator-load/options.js').Options} Options */
/** @typedef {import('./coordinator-load/services.js').CoordinatorProcess} CoordinatorProcess */
/** @typedef {import('./coordinator-load/services.js').StoreService} StoreService */
/** @typedef {import('./coordinator-load/traffic.js').TrafficSummary} TrafficSummary */
/** @typedef {import('./coordinator-load/report.js').TrafficResult} TrafficResult */
/** @typedef {import('./coordinator-load/report.js').IdleResult} IdleResult */
/** @typedef {{ pool: WorkerPool, coordinators: CoordinatorProcess[], store: StoreService, options: Readonly<Options> }} Bench */

/** Assets each idle client joins with. */
const IDLE_HAVE = 3
/** Pause before a memory reading, for sockets, the store and the forced GC to finish. */
const SETTLE_MS = 500
const TICKS_PER_SECOND = clockTicksPerSecond()

/** @param {string} message */
function log (message) {
  process.stderr.write(`coordinator-load: ${message}\n`)
}

/** Stop functions, run newest first, each once; errors are logged, not thrown. */
class Cleanup {
  constructor () {
    /** @type {(() => Promise<void>)[]} */
    this.tasks = []
  }

  /** @param {() => Promise<void>} task */
  add (task) {
    this.tasks.push(task)
  }

  async run () {
    for (let task = this.tasks.pop(); task !== undefined; task = this.tasks.pop()) {
      try {
        await task()
      } catch (err) {
        log(`cleanup: ${/** @type {Error} */ (err).message}`)
      }
    }
  }
}

/**
 * Client i (numbered from `first`) connects to coordinator i mod N and lives in worker i mod W.
 *
 * @param {CoordinatorProcess[]} coordinators
 * @param {number} workers
 * @param {number} first
 * @param {number} count
 * @returns {string[][]} per worker, the URL of each of its clients
 */
function urlsByWorker (coordinators, workers, first, count) {
  /** @type {string[][]} */
  const urls = Array.from({ length: workers }, () => [])
  for (let i = first; i < first + count; i++) urls[i % workers].push(coordinators[i % coordinators.length].url)
  return urls
}

/**
 * @param {CoordinatorProcess[]} coordinators
 * @param {string} phase
 */
function assertRunning (coordinators, phase) {
  const dead = coordinators.findIndex((c) => c.exit !== null)
  if (dead !== -1) throw new Error(`coordinator ${dead} (pid ${coordinators[dead].pid}) ended during ${phase}: ${JSON.stringify(coordinators[dead].exit)}`)
}

/**
 * @param {number[]} pids
 * @returns {number[]} each process's CPU seconds so far
 */
function cpuSeconds (pids) {
  return pids.map((pid) => cpuTicks(pid) / TICKS_PER_SECOND)
}

/** @param {number[]} values @returns {number} */
const sum = (values) => values.reduce((a, b) => a + b, 0)

/**
 * Wait until the coordinators' `/stats` count `expected` peers on their own
 * sockets, or 10 s have passed; a failed /stats is logged and ends the wait.
 *
 * @param {CoordinatorProcess[]} coordinators
 * @param {number} expected
 */
async function waitForLocalPeers (coordinators, expected) {
  const deadline = performance.now() + 10_000
  let peers = NaN
  try {
    do {
      const stats = await Promise.all(coordinators.map(async (c) => (await fetch(c.statsUrl)).json()))
      peers = sum(stats.map((s) => Number(s.localPeers)))
      if (peers === expected) return
      await sleep(50)
    } while (performance.now() < deadline)
    log(`the coordinators list ${peers} local peers after 10 s, expected ${expected}; measuring anyway`)
  } catch (err) {
    log(`cannot read /stats (${/** @type {Error} */ (err).message}); measuring anyway`)
  }
}

/**
 * Phase 1: open and join the load clients.
 *
 * @param {Bench} bench
 * @returns {Promise<number[]>} how many clients each load worker owns
 */
async function joinLoadClients ({ pool, coordinators, options }) {
  log(`phase 1: joining ${options.clients} clients with ${options.have} assets each`)
  const shares = urlsByWorker(coordinators, options.workers, 0, options.clients)
  await Promise.all(shares.map((urls, w) => pool.call(w, 'open', { urls, have: options.have })))
  assertRunning(coordinators, 'phase 1')
  return shares.map((urls) => urls.length)
}

/**
 * Phase 2: transactions for --seconds, and the CPU the coordinators and Redis
 * spent meanwhile. With --flood, --flood-rounds pairs of windows of --seconds
 * each, one without and one beside a fresh flooding client, so that the
 * others' latency with and without it is measured in the same run, in turns
 * (a machine that slows down weighs on both alike). Closes the load clients
 * afterwards.
 *
 * @param {Bench} bench
 * @param {number[]} shares clients per load worker
 * @returns {Promise<TrafficResult>}
 */
async function runTransactions ({ pool, coordinators, store, options }, shares) {
  const pace = (/** @type {number} */ count) => options.rate === null ? null : options.rate * count / options.clients
  if (options.warmup > 0) {
    log(`phase 2: ${options.warmup} s of warm-up transactions, not measured`)
    await Promise.all(shares.map((count, w) => pool.call(w, 'run', { seconds: options.warmup, rate: pace(count), resetCounts: false })))
  }
  const coordinatorPids = coordinators.map((c) => c.pid)
  const metricsUrls = coordinators.flatMap((c) => c.metricsUrl === null ? [] : [c.metricsUrl])
  // Scraped now, their loops' delay histograms start afresh with the window.
  const loopsBefore = await scrapeLoops(metricsUrls)
  const before = { coordinators: cpuSeconds(coordinatorPids), redis: sum(cpuSeconds(store.pids)), redisCounts: await redisCounts(store.ports), loadGen: process.cpuUsage(), machine: machineTicks() }
  const started = performance.now()
  let first = true
  /**
   * @param {boolean} withFlood
   * @returns {Promise<{ summaries: TrafficSummary[], flood: import('./coordinator-load/flood.js').FloodResult | null }>}
   */
  const window = async (withFlood) => {
    log(`phase 2: ${options.seconds} s of transactions, ${options.rate === null ? 'closed loop' : `${options.rate}/s`}${withFlood ? ', with a flooding client' : ''}`)
    // Relayed signals are counted from the first measured window to the end.
    const runs = shares.map((count, w) => pool.call(w, 'run', { seconds: options.seconds, rate: pace(count), resetCounts: first }))
    first = false
    const flood = withFlood ? pool.call(options.workers, 'flood', { url: coordinators[0].url, seconds: options.seconds, reconnect: options.floodReconnect }) : null
    return { summaries: await Promise.all(runs), flood: await flood }
  }
  /** @type {TrafficSummary[]} */
  const summaries = []
  /** @type {TrafficSummary[]} */
  const baseline = []
  /** @type {import('./coordinator-load/flood.js').FloodResult[]} */
  const floods = []
  for (let round = 0; round < (options.flood ? options.floodRounds : 1); round++) {
    if (options.flood) baseline.push(...(await window(false)).summaries)
    const { summaries: measured, flood } = await window(options.flood)
    summaries.push(...measured)
    if (flood !== null) floods.push(flood)
  }
  const wallS = (performance.now() - started) / 1000
  const loops = metricsUrls.length === 0 ? null : loopStats(loopsBefore, await scrapeLoops(metricsUrls))
  const loadGen = process.cpuUsage(before.loadGen)
  const serverCpuEach = cpuSeconds(coordinatorPids).map((s, i) => s - before.coordinators[i])
  const redisCpuS = sum(cpuSeconds(store.pids)) - before.redis
  const machine = machineTicks()
  const counted = await redisCounts(store.ports)
  const redisWork = { commands: counted.commands - before.redisCounts.commands, bytesIn: counted.bytesIn - before.redisCounts.bytesIn, bytesOut: counted.bytesOut - before.redisCounts.bytesOut }
  assertRunning(coordinators, 'phase 2')
  await sleep(SETTLE_MS) // relays acknowledged through another shard's bus may still be on their way
  const signals = sum(await Promise.all(shares.map((_, w) => pool.call(w, 'closeLoad'))))
  const loadGenCpuS = (loadGen.user + loadGen.system) / 1e6
  // What else ran on the machine, or on the host under it, meanwhile: on a shared host the figures get noisy.
  const otherCpuS = Math.max(0, (machine.processes - before.machine.processes) / TICKS_PER_SECOND - sum(serverCpuEach) - redisCpuS - loadGenCpuS)
  const stealCpuS = (machine.steal - before.machine.steal) / TICKS_PER_SECOND
  return { summaries, baseline, wallS, serverCpuEach, redisCpuS, redisWork, loadGenCpuS, otherCpuS, stealCpuS, signals, floods, loops }
}

/**
 * Phase 3: resident memory of fresh coordinators (and of Redis) per idle
 * client. The coordinators of phase 2 are replaced first: their heaps keep
 * pages that phase 2's garbage freed, which idle clients would fill unseen.
 *
 * @param {Bench} bench
 * @param {Cleanup} cleanup
 * @returns {Promise<IdleResult | null>} null when skipped
 */
async function measureIdle ({ pool, coordinators: previous, store, options }, cleanup) {
  if (options.idle === 0) return null
  log('phase 3: restarting the coordinators')
  await Promise.all(previous.map((c) => c.stop()))
  const coordinators = await startCoordinators(options, store, cleanup)
  const rss = async () => {
    for (const c of coordinators) c.collectGarbage()
    await sleep(SETTLE_MS)
    return { coordinators: sum(coordinators.map((c) => residentBytes(c.pid))), redis: sum(store.pids.map(residentBytes)) }
  }
  const before = await rss()
  log(`phase 3: joining ${options.idle} idle clients with ${IDLE_HAVE} assets each`)
  const shares = urlsByWorker(coordinators, options.workers, options.clients, options.idle)
  await Promise.all(shares.map((urls, w) => pool.call(w, 'openIdle', { urls, have: IDLE_HAVE })))
  await waitForLocalPeers(coordinators, options.idle)
  const after = await rss()
  assertRunning(coordinators, 'phase 3')
  return {
    bytesPerClient: (after.coordinators - before.coordinators) / options.idle,
    redisBytesPerClient: (after.redis - before.redis) / options.idle
  }
}

/**
 * @param {Readonly<Options>} options
 * @param {StoreService} store
 * @param {Cleanup} cleanup each one's stop is added to it
 * @returns {Promise<CoordinatorProcess[]>} --processes coordinators on `store`, listening
 */
async function startCoordinators (options, store, cleanup) {
  /** @type {CoordinatorProcess[]} */
  const coordinators = []
  for (let i = 0; i < options.processes; i++) {
    const settings = { server: options.server, redisUrl: store.url, cpuProfDir: options.cpuProf, peerRateLimit: options.peerRateLimit }
    coordinators.push(await startCoordinatorProcess(settings, (stop) => cleanup.add(stop)))
  }
  return coordinators
}

/**
 * @param {Readonly<Options>} options
 * @param {Cleanup} cleanup
 * @returns {Promise<object>} the report
 */
async function benchmark (options, cleanup) {
  log(`starting the ${options.store} store and ${options.processes} coordinator process(es)`)
  const store = await startStore(options.store)
  cleanup.add(store.close)
  const coordinators = await startCoordinators(options, store, cleanup)
  const pool = new WorkerPool(options.workers + (options.flood ? 1 : 0), { assets: options.assets, server: options.server, signal: options.signal, workload: options.workload, pageAssets: options.pageAssets, pageOffers: options.pageOffers })
  cleanup.add(() => pool.terminate())
  const bench = { pool, coordinators, store, options }
  const shares = await joinLoadClients(bench)
  const traffic = await runTransactions(bench, shares)
  const idle = await measureIdle(bench, cleanup)
  return report(options, traffic, idle)
}

async function main () {
  let options
  try {
    options = parseOptions(process.argv.slice(2))
    if (options === null) {
      process.stdout.write(USAGE)
      return
    }
    checkFileLimit(options)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    log(`${err.message} (see --help)`)
    process.exitCode = 2
    return
  }
  const cleanup = new Cleanup()
  let interrupted = false
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
    process.once(signal, async () => {
      interrupted = true
      log(`${signal}: stopping everything`)
      await cleanup.run()
      process.exit(130)
    })
  }
  try {
    console.log(JSON.stringify(await benchmark(options, cleanup)))
  } catch (err) {
    // After Ctrl-C, the phase in progress fails as its workers go; that is not news.
    if (!interrupted) log(`failed: ${/** @type {Error} */ (err).message}`)
    process.exitCode = 1
  } finally {
    await cleanup.run()
  }
}

await main()
