/**
 * One trial of the Redis client benchmark, in a process of its own (forked by
 * bench/redis-clients.js, so each client starts on a fresh heap and its
 * threads end with it): connects one variant's client to the Redis the parent
 * loaded, runs --inflight callers each doing transactions back to back (a
 * lookup, a mark not awaited, a change), and measures over the window after
 * the warm-up: this process's CPU time (process.cpuUsage: every thread,
 * native ones included), the transactions and commands completed, and the
 * Redis server's CPU time from /proc. Sends the figures to the parent over
 * IPC and exits.
 *
 *   (forked) node bench/redis-clients/trial.js '<TrialOptions as JSON>'
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { cpuTicks, machineTicks } from '../coordinator-load/procfs.js'
import { HASHES, assetHash, assetsKey, callerAssets, holdersKey, peerId } from './workload.js'
import { VARIANTS, missing } from './variants.js'

/**
 * @typedef {object} TrialOptions
 * @property {string} variant a name from VARIANTS
 * @property {string} url the Redis to use
 * @property {number} redisPid its process, for its CPU time
 * @property {number} inflight callers, each with one transaction in flight
 * @property {number} warmupS unmeasured seconds first
 * @property {number} seconds measured
 */
/**
 * @typedef {object} TrialResult
 * @property {string} variant
 * @property {number} elapsedMs the measured window
 * @property {number} transactions completed in it
 * @property {number} commands completed in it (marks counted when sent)
 * @property {number} cpuUs this process's user + system CPU time in it, µs
 * @property {number} redisTicks the Redis server's CPU time in it, clock ticks
 * @property {number} machineTicks every process's CPU time on the machine in it, clock ticks
 * @property {number} emptyLookups lookups that found no holder (each should find about 10)
 */

/**
 * @param {TrialOptions} options
 * @returns {Promise<TrialResult>}
 */
export async function runTrial ({ variant, url, redisPid, inflight, warmupS, seconds }) {
  const chosen = VARIANTS.find((v) => v.name === variant)
  if (chosen === undefined) throw new Error(`no variant "${variant}"`)
  const why = missing(chosen)
  if (why !== null) throw new Error(`the ${variant} variant cannot run: ${why}`)
  const client = await chosen.open(url)
  const hashes = Array.from({ length: HASHES }, (_, h) => assetHash(h))
  const counts = { transactions: 0, commands: 0, empty: 0 }
  const state = { running: true }
  /** @type {Error | null} the first command that failed: the trial fails */
  let failure = null
  const fail = (/** @type {Error} */ err) => {
    failure ??= err
    state.running = false
  }
  /**
   * One caller: a peer that looks up random assets and swaps its own two.
   * @param {number} i
   */
  const caller = async (i) => {
    const id = peerId('caller', i)
    const assets = callerAssets(i)
    const keys = [assetsKey(id), holdersKey(assets[0]), holdersKey(assets[1])]
    const swapped = [assetsKey(id), keys[2], keys[1]]
    let holding = 0
    while (state.running) {
      const key = holdersKey(hashes[(Math.random() * HASHES) | 0])
      const holders = await client.lookup(key)
      counts.commands++
      if (holders.length === 0 || !(holders[0].lastChosen >= 0) || !holders[0].id.startsWith('s')) {
        counts.empty++
      } else {
        // As the lookup handler does: not awaited, the reply does not wait for it.
        client.mark(key, holders[0].id, Date.now()).catch(fail)
        counts.commands++
      }
      // One removal (the asset it holds), then one addition (the other), as RedisStore.updatePeer sends them.
      await client.change(holding === 0 ? keys : swapped, [id, 1, assets[holding], assets[1 - holding]])
      holding = 1 - holding
      counts.commands++
      counts.transactions++
    }
  }
  const callers = Array.from({ length: inflight }, (_, i) => caller(i).catch(fail))
  try {
    await sleep(warmupS * 1000)
    const start = { at: performance.now(), cpu: process.cpuUsage(), redis: cpuTicks(redisPid), machine: machineTicks().processes, ...counts }
    await sleep(seconds * 1000)
    if (failure !== null) throw failure
    const cpu = process.cpuUsage(start.cpu)
    const end = { at: performance.now(), redis: cpuTicks(redisPid), machine: machineTicks().processes, ...counts }
    state.running = false
    await Promise.all(callers)
    if (failure !== null) throw failure
    return {
      variant,
      elapsedMs: end.at - start.at,
      transactions: end.transactions - start.transactions,
      commands: end.commands - start.commands,
      cpuUs: cpu.user + cpu.system,
      redisTicks: end.redis - start.redis,
      machineTicks: end.machine - start.machine,
      emptyLookups: end.empty - start.empty
    }
  } finally {
    state.running = false
    await Promise.all(callers)
    // Marks still on their way settle or time out here, before the connection goes.
    await sleep(50)
    // A close that fails (Redis gone) must not hide why the trial failed.
    await client.close().catch(() => {})
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.send === undefined) {
    console.error('redis-clients trial: run by bench/redis-clients.js (it needs the IPC channel)')
    process.exit(2)
  }
  const send = (/** @type {object} */ message) => new Promise((resolve) => /** @type {NonNullable<typeof process.send>} */ (process.send)(message, resolve))
  try {
    const result = await runTrial(JSON.parse(process.argv[2]))
    await send({ result })
    process.exit(0)
  } catch (err) {
    await send({ error: /** @type {Error} */ (err).stack ?? String(err) })
    process.exit(1)
  }
}
