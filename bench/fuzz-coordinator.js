#!/usr/bin/env node
/**
 * The long fuzzing run of the coordinator (the quick one, inside `npm test`,
 * is coordinator/test/fuzz.test.js; both draw from
 * test/support/fuzz-arbitraries.js and drive the clients of
 * test/support/fuzz-clients.js). With `--store redis` (the default)
 * it starts its own redis-server and two coordinator processes on it (two
 * shards); with `memory`, one coordinator process on its in-process store.
 * Fuzzing clients on every shard send at least `--messages` generated and
 * mutated frames in all, `connect`s among them aimed at peers on the other
 * shard (so signals cross the Redis bus), one client per shard flooding past
 * the rate limit; meanwhile a well-behaved peer on each shard looks up,
 * connects to, and updates with the other one, checking every reply. The
 * well-behaved pair runs in a worker thread of this script, so that its
 * replies wait on the coordinators, not on the fuzzers' busy event loop.
 *
 *   node bench/fuzz-coordinator.js [--messages N] [--seed S] [--store memory|redis] [--max-seconds T] [--fuzzers F]
 *
 * Prints one JSON line on stdout (progress and the first problems on
 * stderr) and exits 1 when a coordinator crashed, anything went unhandled,
 * a reply or close broke the protocol (a code not in the registry, say), an
 * internal error was replied as a store failure, or the well-behaved peers
 * were not served exactly. Loopback only, bounded by `--max-seconds`.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads'
import fc from 'fast-check'
import { ERRORS, LIMITS } from '../protocol/index.js'
import { CoordinatorProcess } from '../test/support/coordinator-process.js'
import { startRedisServer } from '../test/support/redis-server.js'
import { fuzzSeed, sessionArb } from '../test/support/fuzz-arbitraries.js'
import { FrameFuzzer, WellBehavedPair, newTally } from '../test/support/fuzz-clients.js'

const USAGE = 'usage: node bench/fuzz-coordinator.js [--messages N (100000)] [--seed S] [--store memory|redis (redis)] [--max-seconds T (300)] [--fuzzers F (8)]'
/** Each coordinator's rate limit: high enough for the paced fuzzers and the well-behaved peers, low enough for the flooders to meet. */
const RATE = { perSecond: 2000, burst: 2000, closeAfter: 200 }
/** What a paced fuzzer sends a second, under RATE.perSecond with room for its probes. */
const PACED_PER_SECOND = 1500
/** How often the flooders send each frame: far past RATE.burst within a session. */
const FLOOD_REPEAT = 25
/** Sessions sampled at once per fuzzer. */
const SESSIONS_PER_BATCH = 4
/** Error types that are bugs when the coordinator replies them as MGH_ERR_STORE (a store fails with its own). */
const INTERNAL_ERROR_TYPES = new Set(['TypeError', 'RangeError', 'ReferenceError', 'SyntaxError'])

/** @typedef {WellBehavedPair['stats']} PairStats */
/** Pause between the well-behaved pair's rounds: each of its sockets stays far under RATE.perSecond. */
const PAIR_PAUSE_MS = 5
/** Rounds the pair plays once the fuzzing has stopped (none after a crash). */
const ROUNDS_AFTER = 10

/** @param {string} message */
function log (message) {
  process.stderr.write(`fuzz-coordinator: ${message}\n`)
}

/**
 * @param {string[]} argv
 * @returns {{ messages: number, seed: number, store: 'memory' | 'redis', maxSeconds: number, fuzzers: number }}
 * @throws {TypeError} on an unknown flag or a bad value
 */
function parseOptions (argv) {
  const { values } = parseArgs({ args: argv, options: Object.fromEntries(['messages', 'seed', 'store', 'max-seconds', 'fuzzers'].map((f) => [f, { type: 'string' }])) })
  const integer = (/** @type {string} */ name, /** @type {string | undefined} */ text, /** @type {number} */ fallback, /** @type {number} */ min) => {
    const value = text === undefined ? fallback : Number(text)
    if (!Number.isSafeInteger(value) || value < min) throw new TypeError(`--${name} must be an integer of at least ${min}, got ${text}`)
    return value
  }
  const store = values.store ?? 'redis'
  if (store !== 'memory' && store !== 'redis') throw new TypeError(`--store must be memory or redis, got ${store}`)
  return {
    messages: integer('messages', values.messages, 100_000, 1),
    seed: values.seed === undefined ? fuzzSeed() : fuzzSeed(values.seed),
    store,
    maxSeconds: integer('max-seconds', values['max-seconds'], 300, 1),
    fuzzers: integer('fuzzers', values.fuzzers, 8, 1)
  }
}

/**
 * Watches a coordinator process: an exit before `expected` (or not 0) is a
 * crash; the warnings Node prints for unhandled rejections, and the log
 * lines of MGH_ERR_STORE replied for a programming error, are counted.
 */
class Watch {
  /** @param {CoordinatorProcess} coordinator */
  constructor (coordinator) {
    this.coordinator = coordinator
    this.expected = false
    this.crashes = 0
    this.unhandled = 0
    /** @type {string[]} internal errors replied as store failures, described */
    this.internal = []
    /** @type {string[]} the first unhandled rejections Node reported */
    this.rejections = []
    coordinator.exited.then((exit) => {
      if (this.expected && exit.code === 0) return
      this.crashes++
      log(`${coordinator.name} exited ${JSON.stringify(exit)}:\n${coordinator.logs().slice(-3000)}`)
    })
    let pending = ''
    coordinator.child?.stdout?.on('data', (chunk) => {
      const lines = (pending + chunk).split('\n')
      pending = /** @type {string} */ (lines.pop())
      for (const line of lines) this.read(line)
    })
    coordinator.child?.stderr?.on('data', (chunk) => {
      const found = String(chunk).match(/UnhandledPromiseRejectionWarning: (?!Unhandled promise rejection\.).*/g) ?? []
      this.unhandled += found.length
      this.rejections.push(...found.slice(0, Math.max(0, 3 - this.rejections.length)))
    })
  }

  /** @param {string} line a JSON log line */
  read (line) {
    let entry
    try { entry = JSON.parse(line) } catch { return }
    if (entry.code === ERRORS.MGH_ERR_STORE.code && INTERNAL_ERROR_TYPES.has(entry.err?.type)) {
      this.internal.push(`${entry.err.type}: ${entry.err.message}\n${entry.err.stack ?? ''}`)
    }
  }
}

/**
 * A seed per fuzzer and batch, spread from the run's seed.
 * @param {number} seed
 * @param {number} fuzzer
 * @param {number} batch
 */
const seedOf = (seed, fuzzer, batch) => (seed ^ Math.imul(fuzzer + 1, 0x9e3779b1) ^ Math.imul(batch + 1, 0x85ebca6b)) | 0

/**
 * Sessions for one fuzzer until `done()`, or until its coordinator cannot
 * be reached (a crash, which the coordinator's Watch counts).
 * @param {FrameFuzzer} fuzzer
 * @param {fc.Arbitrary<import('../test/support/fuzz-arbitraries.js').FuzzSession>} sessions
 * @param {number} seed
 * @param {number} index
 * @param {() => boolean} done
 */
async function fuzzUntil (fuzzer, sessions, seed, index, done) {
  try {
    for (let batch = 0; !done(); batch++) {
      for (const session of fc.sample(sessions, { seed: seedOf(seed, index, batch), numRuns: SESSIONS_PER_BATCH })) {
        if (done()) break
        await fuzzer.run(session)
      }
    }
    await fuzzer.close()
  } catch (err) {
    fuzzer.problem(`fuzzer ${index} stopped: ${err.message}`)
  }
}

/**
 * @param {CoordinatorProcess[]} coordinators
 * @returns {Promise<Record<string, number>>} counters summed over their `/stats`
 */
async function counters (coordinators) {
  /** @type {Record<string, number>} */
  const sum = {}
  for (const c of coordinators) {
    const stats = await c.stats().catch(() => ({})) // a coordinator that crashed has none; its Watch says so
    for (const key of ['messages', 'errors', 'dropped', 'relayed', 'forwarded', 'busRejected']) sum[key] = (sum[key] ?? 0) + (stats[key] ?? 0)
  }
  return sum
}

/**
 * Start the well-behaved pair in a worker thread. It posts its peers' ids and
 * the bait assets whenever they change (the fuzzers aim at them), and, once
 * told to stop, plays the rounds it is told to and posts its stats.
 * @param {[string, string]} urls
 * @param {import('../test/support/fuzz-arbitraries.js').FuzzTargets} targets updated from the worker
 * @returns {Promise<{ worker: Worker, rounds: number, stop: (after: number) => Promise<PairStats> }>} `rounds` as last
 *   heard; `stop(after)` plays `after` more rounds, then resolves with the stats
 */
async function startPair (urls, targets) {
  const worker = new Worker(new URL(import.meta.url), { workerData: { urls, limits: targets.limits } })
  /** @type {(stats: PairStats) => void} */
  let finish = () => {}
  /** @type {Promise<PairStats>} */
  const finished = new Promise((resolve) => { finish = resolve })
  const pair = { worker, rounds: 0, stop: (/** @type {number} */ after) => { worker.postMessage(after); return finished } }
  await new Promise((resolve, reject) => {
    worker.on('error', (err) => {
      reject(err)
      finish({ requests: 0, failures: 1, rounds: pair.rounds, failed: [`the well-behaved pair failed: ${err.stack}`] })
    })
    worker.on('message', (m) => {
      if (m.peers === undefined) return finish(m)
      targets.peers[0] = m.peers[0]
      targets.peers[1] = m.peers[1]
      targets.hashes.splice(0, targets.hashes.length, ...m.hashes)
      pair.rounds = m.rounds
      resolve(undefined)
    })
  })
  return pair
}

/** The worker's side: play rounds, report the targets after each, stop when told. */
async function pairWorker () {
  const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)
  const { urls, limits } = workerData
  /** @type {import('../test/support/fuzz-arbitraries.js').FuzzTargets} */
  const targets = { limits, hashes: [], peers: [] }
  const pair = new WellBehavedPair({ urls, targets })
  const report = () => port.postMessage({ peers: targets.peers.slice(0, 2), hashes: targets.hashes, rounds: pair.stats.rounds })
  const state = { stopping: false, after: 0 } // set by the main thread's stop while rounds run
  port.once('message', (after) => Object.assign(state, { stopping: true, after }))
  await pair.start()
  report()
  while (!state.stopping) {
    await pair.round()
    report()
    await sleep(PAIR_PAUSE_MS)
  }
  const during = pair.stats.rounds
  await pair.runUntil(() => pair.stats.rounds >= during + state.after, PAIR_PAUSE_MS)
  await pair.close()
  port.postMessage(pair.stats)
}

/**
 * @param {ReturnType<typeof parseOptions>} options
 * @param {(stop: () => Promise<void>) => void} onCleanup
 */
async function run (options, onCleanup) {
  const started = performance.now()
  const deadline = started + options.maxSeconds * 1000
  const redis = options.store === 'redis' ? await startRedisServer() : null
  onCleanup(async () => { await redis?.close() })
  const env = {
    RATE_LIMIT_PER_SECOND: String(RATE.perSecond),
    RATE_LIMIT_BURST: String(RATE.burst),
    RATE_LIMIT_CLOSE_AFTER: String(RATE.closeAfter),
    // The well-behaved pair meets a new holder every round: the bound on new holders would stop it, as it stops a harvester.
    NEW_HOLDER_BURST: '0',
    // An unhandled rejection is reported (and counted) rather than fatal, so it is told apart from a crash.
    NODE_OPTIONS: '--unhandled-rejections=warn'
  }
  const names = redis === null ? ['fuzz-a'] : ['fuzz-a', 'fuzz-b']
  const coordinators = await Promise.all(names.map((name) => CoordinatorProcess.start({ name, redisUrl: redis?.url ?? '', env })))
  onCleanup(async () => { await Promise.all(coordinators.map((c) => c.stop('SIGKILL'))) })
  const watches = coordinators.map((c) => new Watch(c))
  const urls = coordinators.map((c) => c.url)
  log(`${options.store}: ${coordinators.map((c) => `${c.shard} at ${c.url}`).join(', ')}; seed ${options.seed}`)

  /** @type {import('../test/support/fuzz-arbitraries.js').FuzzTargets} */
  const targets = { limits: { maxMessageBytes: LIMITS.maxMessageBytes, hardMaxMessageBytes: LIMITS.hardMaxMessageBytes, maxAssetsPerMessage: LIMITS.maxAssetsPerMessage }, hashes: [], peers: [] }
  const pair = await startPair([urls[0], urls[urls.length - 1]], targets)
  onCleanup(async () => { await pair.worker.terminate() })
  const tally = newTally()
  const done = () => tally.frames >= options.messages || performance.now() > deadline
  const progress = setInterval(() => log(`${tally.frames} messages, ${pair.rounds} well-behaved rounds`), 5000)
  const sessions = sessionArb(targets)
  // Fuzzers alternate between the shards; the last one on each shard floods.
  await Promise.all(Array.from({ length: options.fuzzers }, (_, i) => {
    const flood = i >= options.fuzzers - urls.length && options.fuzzers > urls.length
    // Each from a loopback address of its own, as separate visitors are: a flooder's address is barred for a moment.
    const fuzzer = new FrameFuzzer(urls[i % urls.length], { targets, tally, localAddress: `127.0.0.${10 + i}`, ...(flood ? { repeat: FLOOD_REPEAT } : { perSecond: PACED_PER_SECOND }) })
    return fuzzUntil(fuzzer, sessions, options.seed, i, done)
  }))
  clearInterval(progress)
  // Rounds after the fuzzing show the coordinators still serve; after a crash they would only time out.
  const stats = await pair.stop(watches.some((w) => w.crashes > 0) ? 0 : ROUNDS_AFTER)
  const summed = await counters(coordinators)
  for (const w of watches) w.expected = true
  // A clean stop is part of the check: a Watch counts any exit but 0 as a crash.
  await Promise.all(coordinators.map((c) => c.stop('SIGINT')))
  return { tally, stats, watches, summed, seconds: (performance.now() - started) / 1000 }
}

async function main () {
  let options
  try {
    options = parseOptions(process.argv.slice(2))
  } catch (err) {
    log(`${err.message}\n${USAGE}`)
    process.exit(2)
  }
  /** @type {unknown[]} */
  const escaped = []
  process.on('unhandledRejection', (err) => escaped.push(err))
  process.on('uncaughtException', (err) => escaped.push(err))
  /** @type {(() => Promise<void>)[]} */
  const cleanups = []
  const cleanup = async () => { for (const stop of cleanups.reverse()) await stop().catch((err) => log(`cleanup: ${err.message}`)) }
  process.once('SIGINT', () => { cleanup().finally(() => process.exit(130)) })
  let result
  try {
    result = await run(options, (stop) => cleanups.push(stop))
  } finally {
    await cleanup()
  }
  const { tally, stats, watches, summed, seconds } = result
  const unknownCodes = Object.keys(tally.errorsByCode).filter((code) => !Object.hasOwn(ERRORS, code))
  const internal = watches.flatMap((w) => w.internal)
  const report = {
    messages: tally.frames,
    seed: options.seed,
    store: options.store,
    errorsByCode: tally.errorsByCode,
    closesByCode: tally.closesByCode,
    refusedByStatus: tally.refusedByStatus,
    crashes: watches.reduce((n, w) => n + w.crashes, 0),
    unhandled: escaped.length + watches.reduce((n, w) => n + w.unhandled, 0),
    internalErrors: internal.length,
    problems: tally.problemCount,
    wellBehaved: { requests: stats.requests, failures: stats.failures, rounds: stats.rounds },
    coordinators: summed,
    seconds: Math.round(seconds * 10) / 10
  }
  process.stdout.write(`${JSON.stringify(report)}\n`)
  for (const what of [...tally.problems, ...stats.failed, ...internal.slice(0, 5), ...watches.flatMap((w) => w.rejections), ...escaped.map(String)]) log(what)
  if (tally.frames < options.messages) log(`stopped at --max-seconds ${options.maxSeconds} after ${tally.frames} of ${options.messages} messages`)
  const failed = report.crashes + report.unhandled + report.internalErrors + report.problems + report.wellBehaved.failures + unknownCodes.length > 0
  process.exit(failed ? 1 : 0)
}

if (isMainThread) {
  main().catch((err) => {
    log(err.stack ?? String(err))
    process.exit(1)
  })
} else {
  pairWorker()
}
