#!/usr/bin/env node
/**
 * What the Redis client costs the coordinator (issue 25): the CPU time that
 * the Node process running the client spends per transaction of the
 * coordinator's Redis command mix, for ioredis 5 (the store's dependency)
 * configured as RedisStore configures it, thinner uses of ioredis 5, ioredis 6
 * (this measured ioredis 5 at 0.6-0.86x the client CPU of ioredis 6 and its
 * new reply decoder: why the store went back to 5), and the other maintained
 * clients on npm: node-redis, iovalkey (the ioredis 5 fork) and Valkey GLIDE.
 *
 * On one Redis the store no longer sends these commands one by one: it
 * gathers the hot calls of an event-loop turn into one script call
 * (coordinator/src/store/redis-batch.js). What this measures is the
 * per-command client cost that remains: on a Cluster, where every call is
 * still a command (or auto-pipelined commands) of its own, and for the
 * batch's own arguments and replies, which go through the same client code.
 *
 * Only ioredis is in package.json; the alternatives are optional. To compare
 * them, install them without saving (package.json and package-lock.json stay
 * as they are, and a plain `npm install` removes them again):
 *   npm install --no-save redis@^6.3.1 iovalkey@^0.4.0 @valkey/valkey-glide@^2.5.2 ioredis6@npm:ioredis@^6
 * A variant whose package is not installed is skipped (one line on stderr,
 * and `skipped` in the JSON); one named in --variants exits 2.
 *
 * One transaction is what a lookup and an update cost the store:
 *   1. a lookup, `HRANDFIELD mgh:h:{<hash>} 32 WITHVALUES`, on a hash of about
 *      10 holders (peer id → ms time), the reply made into { id, lastChosen };
 *   2. a mark, EVALSHA of the store's MARK_LUA on the first holder, not awaited;
 *   3. a change, EVALSHA of CHANGE_LUA (workload.js: the script the store sent
 *      for one before its batch) with 3 keys (the peer's asset set, two holder
 *      hashes): one removal and one addition.
 * --inflight callers (256: a coordinator's many sessions) each run
 * transactions back to back, so a client that batches the commands issued
 * together (auto-pipelining) can. Each trial is one variant in a fresh
 * process (redis-clients/trial.js), against one redis-server this script
 * starts on loopback and reloads before each trial: --warmup seconds
 * unmeasured, then --seconds measured. Rounds run every variant in the same
 * order (A B C … A B C …); the figures are medians with min and max over the
 * rounds, and each variant's ratio to the first (ioredis as the store uses
 * it) within each round. Measured per variant:
 *   - client CPU (user + system, every thread of the process, from
 *     process.cpuUsage) per transaction and per command, and client
 *     CPU-seconds per 1,000 transactions;
 *   - transactions and commands per second (closed loop: bounded by the
 *     client's CPU or Redis's, whichever runs out first);
 *   - Redis's CPU per transaction (its /proc/<pid>/stat), so client and
 *     server cost sit side by side;
 *   - how many cores the machine's other processes kept busy meanwhile
 *     (others' work makes throughput, and CPU per transaction too, noisy:
 *     run it on a quiet machine).
 * Prints progress on stderr and one JSON line on stdout. Loopback only;
 * Redis and every trial process are stopped at the end, on error and on Ctrl-C.
 *
 *   node bench/redis-clients.js [--seconds 3] [--rounds 3] [--inflight 256] [--warmup 1] [--variants a,b,…]
 */
import { fork } from 'node:child_process'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import { startRedisServer } from '../test/support/redis-server.js'
import { clockTicksPerSecond } from './coordinator-load/procfs.js'
import { median } from './stats.js'
import { INSTALL_OPTIONAL, VARIANTS, missing } from './redis-clients/variants.js'
import { COMMANDS_PER_TRANSACTION, FIELDS_PER_HASH, HASHES, SAMPLE, seedCommands } from './redis-clients/workload.js'

/** @typedef {import('./redis-clients/trial.js').TrialResult} TrialResult */
/** @typedef {import('./redis-clients/trial.js').TrialOptions} TrialOptions */
/** @typedef {import('./redis-clients/variants.js').Variant} Variant */
/**
 * @typedef {{ seconds: number, rounds: number, inflight: number, warmupS: number, variants: Variant[], skipped: Record<string, string> }} Options
 *   `skipped`: variants left out because their package is not installed, each with why
 */

const TRIAL_PATH = new URL('./redis-clients/trial.js', import.meta.url).pathname
/** Time a trial may take beyond its warm-up and window (starting Node, connecting, closing) before it is killed. */
const TRIAL_SLACK_MS = 30_000
const TICKS_PER_SECOND = clockTicksPerSecond()

/** @param {string} message */
function log (message) {
  process.stderr.write(`redis-clients: ${message}\n`)
}

/** Trial processes running, killed on Ctrl-C. */
const children = new Set()
/** Set on Ctrl-C: no further trial starts. */
const stop = { requested: false }

/**
 * Empty Redis and load the data set: every trial starts from the same data.
 * @param {Redis} redis
 * @param {number} inflight
 */
async function reload (redis, inflight) {
  await redis.flushall('SYNC')
  const pipeline = redis.pipeline()
  for (const [name, ...args] of seedCommands(inflight, Date.now())) pipeline.call(name, ...args)
  for (const [err] of /** @type {[Error | null, unknown][]} */ (await pipeline.exec())) if (err) throw err
}

/**
 * Run one trial in a process of its own.
 * @param {TrialOptions} options
 * @returns {Promise<TrialResult>}
 */
function trial (options) {
  return new Promise((resolve, reject) => {
    // The trial's output goes to stderr: stdout carries only this script's JSON line.
    const child = fork(TRIAL_PATH, [JSON.stringify(options)], { stdio: ['ignore', 2, 2, 'ipc'] })
    children.add(child)
    /** @type {{ result?: TrialResult, error?: string } | null} */
    let reply = null
    const limitMs = (options.warmupS + options.seconds) * 1000 + TRIAL_SLACK_MS
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reply ??= { error: `the ${options.variant} trial did not finish within ${limitMs} ms` }
    }, limitMs)
    child.on('message', (message) => { reply ??= /** @type {{ result?: TrialResult, error?: string }} */ (message) })
    child.once('error', (err) => { reply ??= { error: err.message } })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      children.delete(child)
      if (reply?.result !== undefined) resolve(reply.result)
      else reject(new Error(`the ${options.variant} trial failed (exit ${code ?? signal}): ${reply?.error ?? 'it reported nothing'}`))
    })
  })
}

/**
 * @param {number[]} xs
 * @param {number} digits
 * @returns {{ median: number, min: number, max: number }}
 */
function spread (xs, digits) {
  const round = (/** @type {number} */ x) => Number(x.toFixed(digits))
  return { median: round(median(xs)), min: round(Math.min(...xs)), max: round(Math.max(...xs)) }
}

/**
 * @param {TrialResult} t
 * @returns {{ clientUsPerTxn: number, clientUsPerCommand: number, txnPerS: number, commandsPerS: number, clientCores: number, redisUsPerTxn: number, redisCores: number, otherCores: number }}
 */
function perTrial (t) {
  const seconds = t.elapsedMs / 1000
  const redisUs = t.redisTicks * 1e6 / TICKS_PER_SECOND
  const clientCores = t.cpuUs / 1e6 / seconds
  const redisCores = redisUs / 1e6 / seconds
  return {
    clientUsPerTxn: t.cpuUs / t.transactions,
    clientUsPerCommand: t.cpuUs / t.commands,
    txnPerS: t.transactions / seconds,
    commandsPerS: t.commands / seconds,
    clientCores,
    redisUsPerTxn: redisUs / t.transactions,
    redisCores,
    // what the rest of the machine was doing meanwhile (other benchmarks skew the figures)
    otherCores: Math.max(0, t.machineTicks / TICKS_PER_SECOND / seconds - clientCores - redisCores)
  }
}

/**
 * The figures: per variant, spreads over the rounds and ratios to the first variant within each round.
 * @param {Options} options
 * @param {TrialResult[][]} rounds each round's trials, in the variants' order
 * @param {string} redisVersion
 */
function figures (options, rounds, redisVersion) {
  const [base] = options.variants
  /** @type {Record<string, object>} */
  const variants = {}
  for (const [v, variant] of options.variants.entries()) {
    const trials = rounds.map((round) => perTrial(round[v]))
    const baseTrials = rounds.map((round) => perTrial(round[0]))
    const usPerTxn = spread(trials.map((t) => t.clientUsPerTxn), 1)
    const cpuRatios = trials.map((t, r) => t.clientUsPerTxn / baseTrials[r].clientUsPerTxn)
    const rateRatios = trials.map((t, r) => t.txnPerS / baseTrials[r].txnPerS)
    variants[variant.name] = {
      library: variant.library,
      what: variant.what,
      clientUsPerTxn: usPerTxn,
      clientUsPerCommand: spread(trials.map((t) => t.clientUsPerCommand), 2),
      clientCpuSecondsPer1000Txn: Number((usPerTxn.median / 1000).toFixed(4)),
      txnPerS: spread(trials.map((t) => t.txnPerS), 0),
      commandsPerS: spread(trials.map((t) => t.commandsPerS), 0),
      // cores the client process kept busy: near 1 means its event loop was the limit
      clientCores: spread(trials.map((t) => t.clientCores), 2),
      redisUsPerTxn: spread(trials.map((t) => t.redisUsPerTxn), 1),
      redisCores: spread(trials.map((t) => t.redisCores), 2),
      otherCores: spread(trials.map((t) => t.otherCores), 2),
      [`clientUsPerTxnRatioTo_${base.name}`]: { perRound: cpuRatios.map((x) => Number(x.toFixed(3))), ...spread(cpuRatios, 3) },
      [`txnPerSRatioTo_${base.name}`]: { perRound: rateRatios.map((x) => Number(x.toFixed(3))), ...spread(rateRatios, 3) }
    }
  }
  const medians = options.variants.map((variant, v) => ({ name: variant.name, us: spread(rounds.map((round) => perTrial(round[v]).clientUsPerTxn), 3).median }))
  const cheapest = medians.reduce((a, b) => (b.us < a.us ? b : a))
  const others = spread(rounds.flat().map((t) => perTrial(t).otherCores), 2)
  return {
    bench: 'redis-clients',
    node: process.version,
    redis: redisVersion,
    seconds: options.seconds,
    warmupS: options.warmupS,
    rounds: options.rounds,
    inflight: options.inflight,
    hashes: HASHES,
    fieldsPerHash: FIELDS_PER_HASH,
    sample: SAMPLE,
    commandsPerTxn: COMMANDS_PER_TRANSACTION,
    // cores the machine's other processes used during the measured windows, over all trials
    otherCores: others,
    ...(others.median > 0.25 ? { warning: `other processes kept ${others.median} cores busy (median) during the trials: the figures are noisier than on a quiet machine` } : {}),
    variants,
    skipped: options.skipped,
    cheapestForClient: { variant: cheapest.name, clientUsPerTxnMedian: Number(cheapest.us.toFixed(1)), ratioToBase: Number((cheapest.us / medians[0].us).toFixed(3)) }
  }
}

/**
 * @param {Options} options
 * @returns {Promise<object>} the figures
 */
export async function runRedisClients (options) {
  const server = await startRedisServer()
  const loader = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0 })
  loader.on('error', () => {})
  try {
    await loader.connect()
    const redisVersion = /^redis_version:(\S+)/m.exec(await loader.info('server'))?.[1] ?? 'unknown'
    const redisPid = /** @type {number} */ (server.process.pid)
    log(`redis-server ${redisVersion} on ${server.url}; ${options.variants.length} variants × ${options.rounds} rounds × (${options.warmupS} + ${options.seconds}) s, ${options.inflight} in flight`)
    /** @type {TrialResult[][]} */
    const rounds = []
    for (let round = 0; round < options.rounds; round++) {
      /** @type {TrialResult[]} */
      const trials = []
      for (const variant of options.variants) {
        if (stop.requested) throw new Error('interrupted')
        await reload(loader, options.inflight)
        const t = await trial({ variant: variant.name, url: server.url, redisPid, inflight: options.inflight, warmupS: options.warmupS, seconds: options.seconds })
        if (t.transactions === 0) throw new Error(`the ${variant.name} trial completed no transaction`)
        if (t.emptyLookups > 0) throw new Error(`the ${variant.name} trial had ${t.emptyLookups} lookups without a usable holder (a reply read wrongly?)`)
        const f = perTrial(t)
        log(`round ${round + 1}/${options.rounds} ${variant.name}: ${f.clientUsPerTxn.toFixed(1)} µs client CPU/txn, ${Math.round(f.txnPerS)} txn/s, client ${f.clientCores.toFixed(2)} cores, Redis ${f.redisUsPerTxn.toFixed(1)} µs/txn, others ${f.otherCores.toFixed(2)} cores`)
        trials.push(t)
      }
      rounds.push(trials)
    }
    return figures(options, rounds, redisVersion)
  } finally {
    loader.disconnect()
    await server.close()
  }
}

/** @returns {string} the variants by package, and whether each package is installed */
function variantList () {
  /** @type {Map<string, Variant[]>} */
  const byPackage = new Map()
  for (const v of VARIANTS) byPackage.set(v.package, [...(byPackage.get(v.package) ?? []), v])
  return [...byPackage.values()].map((vs) => {
    const [{ library, optional, package: pkg }] = vs
    const state = library === null ? `${pkg} not installed` : library
    return `                  ${vs.map((v) => v.name).join(', ')}  (${state}${optional ? ', optional' : ''})`
  }).join('\n')
}

const USAGE = `usage: node bench/redis-clients.js [--seconds S] [--rounds N] [--inflight K] [--warmup W] [--variants a,b,…]
  --seconds S   measured seconds per trial (1 to 600, default 3)
  --rounds N    rounds, each running every variant once (1 to 100, default 3)
  --inflight K  transactions in flight at once (1 to 10000, default 256)
  --warmup W    unmeasured seconds before each trial's window (0 to 60, fractions allowed, default 1)
  --variants    which to run, comma-separated, the first being the baseline
                (default: every one whose package is installed, ioredis first):
${variantList()}
Only ioredis (5.x, what the store uses) is in package.json; the others are
optional. To compare them, install them without saving (package.json and
package-lock.json stay as they are; a plain \`npm install\` removes them again):
  ${INSTALL_OPTIONAL}`

/** @param {string} message */
function usageError (message) {
  console.error(`redis-clients: ${message}\n${USAGE}`)
  process.exit(2)
}

/**
 * @param {string | undefined} value
 * @param {string} name
 * @param {number} fallback
 * @param {number} min
 * @param {number} max
 * @param {boolean} [fractions] whether it may have decimals (else an integer)
 * @returns {number}
 */
function number (value, name, fallback, min, max, fractions = false) {
  const n = value === undefined ? fallback : Number(value)
  const form = fractions ? /^\d+(\.\d+)?$/ : /^\d+$/
  if (!form.test(value ?? String(fallback)) || n < min || n > max) usageError(`--${name} must be ${fractions ? 'a number' : 'an integer'} from ${min} to ${max}, got ${value}`)
  return n
}

async function main () {
  /** @type {{ seconds?: string, rounds?: string, inflight?: string, warmup?: string, variants?: string, help?: boolean }} */
  let values = {}
  try {
    values = parseArgs({ options: { seconds: { type: 'string' }, rounds: { type: 'string' }, inflight: { type: 'string' }, warmup: { type: 'string' }, variants: { type: 'string' }, help: { type: 'boolean' } } }).values
  } catch (err) {
    usageError(/** @type {Error} */ (err).message)
  }
  if (values.help) {
    console.log(USAGE)
    return
  }
  const seconds = number(values.seconds, 'seconds', 3, 1, 600)
  const rounds = number(values.rounds, 'rounds', 3, 1, 100)
  const inflight = number(values.inflight, 'inflight', 256, 1, 10_000)
  const warmupS = number(values.warmup, 'warmup', 1, 0, 60, true)
  const named = values.variants?.split(',').map((s) => s.trim()).filter(Boolean)
  const chosen = /** @type {Variant[]} */ ((named ?? VARIANTS.map((v) => v.name)).map((name) => VARIANTS.find((v) => v.name === name) ?? usageError(`no variant "${name}"`)))
  const absent = chosen.filter((v) => missing(v) !== null)
  if (absent.length > 0) {
    const what = `${absent.map((v) => v.name).join(', ')} (${[...new Set(absent.map((v) => v.package))].join(', ')} not installed); install without saving: ${INSTALL_OPTIONAL}`
    if (named !== undefined) {
      console.error(`redis-clients: cannot run ${what}`)
      process.exit(2)
    }
    log(`skipping ${what}`)
  }
  /** @type {Options} */
  const options = {
    seconds,
    rounds,
    inflight,
    warmupS,
    variants: chosen.filter((v) => !absent.includes(v)),
    skipped: Object.fromEntries(absent.map((v) => [v.name, /** @type {string} */ (missing(v))]))
  }
  process.once('SIGINT', () => {
    stop.requested = true
    for (const child of children) child.kill('SIGKILL')
  })
  try {
    console.log(JSON.stringify(await runRedisClients(options)))
  } catch (err) {
    console.error(`redis-clients: failed: ${/** @type {Error} */ (err).message}`)
    process.exitCode = 1
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
