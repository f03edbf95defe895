/**
 * The bench's transaction — a client looks up an asset it does not hold,
 * relays a signal to the first holder, then holds that asset instead of one
 * of its own (each server's client says how in its protocol) — and the two ways a worker
 * drives it: a closed loop (each client starts its next transaction when the
 * last one ends) and an open loop (transactions start on a fixed schedule,
 * each on an idle client, and latency counts from the scheduled start, so a
 * slow coordinator cannot hide its queueing by slowing the generator down).
 */
import { sriHash } from '../../client/manifest.js'
import { LatencySample } from './latency.js'
import { ReplyError } from './bench-client.js'

/** @typedef {import('./bench-client.js').LoadClient<unknown>} LoadClient a client of the server under test, in its protocol */
/**
 * What the loops run transactions on: a {@link LoadClient}, or a {@link PageVisitor} (a transaction is a page view).
 * @typedef {{ transaction: (add: string, index: number) => Promise<boolean>, held: string[], heldSet: Set<string> }} Runner
 */

/**
 * @param {number} size
 * @returns {string[]} SRI names of `size` made-up assets, the same in every thread
 */
export function assetPool (size) {
  return Array.from({ length: size }, (_, i) => sriHash(Buffer.from(`asset${i}`)))
}

/**
 * @param {string[]} pool
 * @param {number} count at most pool.length
 * @returns {string[]} `count` distinct assets picked at random
 */
export function randomAssets (pool, count) {
  const picked = new Set()
  while (picked.size < count) picked.add(pool[randomIndex(pool.length)])
  return [...picked]
}

/** @param {number} n @returns {number} an integer in [0, n) */
function randomIndex (n) {
  return Math.floor(Math.random() * n)
}

/**
 * A visitor that views pages (`--workload page`), each on a socket of its
 * own as a page's script opens one: open, join, one page's lookups and
 * signals and announcement, close. It stands where a {@link LoadClient} does
 * in the loops: its `transaction` is one page view.
 */
export class PageVisitor {
  /**
   * @param {{ open: (url: string) => Promise<LoadClient> }} Client the server's protocol
   * @param {string} url
   * @param {string[]} have what it holds at first
   * @param {{ pool: string[], assets: number, offers: number }} page assets a page has, drawn from `pool`; holders it signals
   */
  constructor (Client, url, have, page) {
    this.Client = Client
    this.url = url
    this.held = have
    this.heldSet = new Set(have)
    this.page = page
    /** signals other visitors sent it, over all its sockets */
    this.signalsIn = 0
    /** @type {Record<string, number>} */
    this.unmatchedErrors = {}
    /** @type {LoadClient | null} the socket of the page being viewed */
    this.current = null
  }

  /** requests in flight (for the report of those left unanswered) */
  get pending () {
    return this.current?.pending ?? new Map()
  }

  /** @returns {Promise<boolean>} whether its page found a holder and signalled it */
  async transaction () {
    const client = this.current = await this.Client.open(this.url)
    try {
      const assets = randomAssets(this.page.pool, this.page.assets)
      const found = await client.page(this.held, assets, this.page.offers)
      // What it holds next time: the page's assets, and as many of its older ones as it held.
      this.held = [...new Set([...assets, ...this.held])].slice(0, this.held.length)
      this.heldSet = new Set(this.held)
      return found
    } finally {
      await client.close()
      this.signalsIn += client.signalsIn
      for (const [code, n] of Object.entries(client.unmatchedErrors)) this.unmatchedErrors[code] = (this.unmatchedErrors[code] ?? 0) + n
      this.current = null
    }
  }

  async close () {}
}

/**
 * @param {Runner} client
 * @param {string[]} pool larger than what the client holds
 * @returns {string} a random asset the client does not hold
 */
function assetNotHeld (client, pool) {
  for (;;) {
    const hash = pool[randomIndex(pool.length)]
    if (!client.heldSet.has(hash)) return hash
  }
}

/** Counters of one worker's transactions. */
export class TrafficStats {
  constructor () {
    this.completed = 0
    /** lookups that found no holder (the connect was skipped) */
    this.misses = 0
    this.connects = 0
    /** open loop: transactions due by the end that never found an idle client */
    this.behind = 0
    /** @type {Record<string, number>} failed transactions by error code */
    this.errors = {}
    this.latency = new LatencySample()
  }

  /** @param {unknown} err */
  countError (err) {
    const code = err instanceof ReplyError ? err.code : `BENCH_${/** @type {Error} */ (err).name}`
    this.errors[code] = (this.errors[code] ?? 0) + 1
  }

  /** @returns {TrafficSummary} */
  summary () {
    const { completed, misses, connects, behind, errors } = this
    return { completed, misses, connects, behind, errors, latency: this.latency.summary() }
  }
}

/**
 * @typedef {object} TrafficSummary
 * @property {number} completed
 * @property {number} misses
 * @property {number} connects
 * @property {number} behind
 * @property {Record<string, number>} errors
 * @property {import('./latency.js').LatencySummary} latency
 */

/**
 * One transaction: the client fetches an asset it does not hold (lookup and
 * a signal relayed to the first holder, if any) and then holds it instead of
 * one it held.
 *
 * @param {Runner} client
 * @param {string[]} pool
 * @param {TrafficStats} stats
 */
async function transaction (client, pool, stats) {
  if (await client.transaction(assetNotHeld(client, pool), randomIndex(client.held.length))) stats.connects++
  else stats.misses++
}

/**
 * Run one transaction and record its outcome.
 *
 * @param {Runner} client
 * @param {string[]} pool
 * @param {TrafficStats} stats
 * @param {number} startedAt performance.now() the latency counts from
 * @returns {Promise<boolean>} false when the client's socket has closed
 */
async function timedTransaction (client, pool, stats, startedAt) {
  try {
    await transaction(client, pool, stats)
    stats.completed++
    stats.latency.add(performance.now() - startedAt)
    return true
  } catch (err) {
    stats.countError(err)
    return !(err instanceof ReplyError && err.code === 'BENCH_CLOSED')
  }
}

/**
 * Closed loop: every client runs transactions back to back until `until`.
 *
 * @param {Runner[]} clients
 * @param {string[]} pool
 * @param {TrafficStats} stats
 * @param {number} until performance.now() to stop starting transactions at
 * @returns {Promise<void>} when every client's last transaction has ended
 */
export async function closedLoop (clients, pool, stats, until) {
  await Promise.all(clients.map(async (client) => {
    while (performance.now() < until) {
      if (!await timedTransaction(client, pool, stats, performance.now())) return
    }
  }))
}

/**
 * Open loop: `rate` transactions per second, the k-th due at start + k/rate,
 * each started on an idle client as soon as it is due and one is free.
 *
 * @param {Runner[]} clients
 * @param {string[]} pool
 * @param {TrafficStats} stats
 * @param {{ rate: number, until: number }} pace transactions/s; performance.now() to stop at
 * @returns {Promise<void>} when every transaction started has ended
 */
export function openLoop (clients, pool, stats, { rate, until }) {
  const interval = 1000 / rate
  const start = performance.now()
  const idle = [...clients]
  let issued = 0
  let running = 0
  return new Promise((resolve) => {
    const due = () => Math.floor((Math.min(performance.now(), until) - start) / interval) + 1
    const startDue = () => {
      while (issued < due() && idle.length > 0) {
        // First in, first out: the load spreads over every client, as over real peers,
        // instead of falling on the few that finished last.
        const client = /** @type {Runner} */ (idle.shift())
        const scheduled = start + issued * interval
        issued++
        running++
        timedTransaction(client, pool, stats, scheduled).then((open) => {
          running--
          if (open) idle.push(client)
          startDue()
        })
      }
      if (performance.now() >= until && running === 0) {
        clearInterval(timer)
        stats.behind = due() - issued
        resolve()
      }
    }
    const timer = setInterval(startDue, 1)
    startDue()
  })
}
