/**
 * This shard's place among the others. Every `intervalMs` it beats its entry
 * in the store's shard registry (what it tells the others: its public URL and
 * its counts), learns which shards are live (the alternates `welcome` hands
 * out, and the liveness every lookup filters holders by), reaps the shards the
 * store hands it as dead, and lists its peers again when the store says it
 * lost them (Redis restarted empty, a flush, a failover without a replica, or
 * this shard was declared dead while it could not reach the store).
 *
 * Listing again waits one beat after the loss is seen: a reaper that was
 * walking this shard's peers has seen the beat take the shard out of `reaping`
 * by then, and stopped, so it cannot delete what is listed again.
 */
import { EventEmitter } from 'node:events'

/**
 * Emits `up` and `down` (err) when beats start or stop succeeding, once per change.
 */
export class Presence extends EventEmitter {
  /**
   * @param {object} deps
   * @param {import('./store/store.js').Store} deps.store
   * @param {string} deps.shard
   * @param {number} deps.intervalMs
   * @param {number} deps.ttlMs how long an entry stays live without a beat
   * @param {() => import('./store/store.js').ShardInfo} deps.info what to tell the others now
   * @param {() => Promise<void>} deps.relist lists every peer of this shard in the store again
   * @param {() => Promise<void>} deps.tidy runs after every beat that succeeds (retries what failed while the store was down)
   * @param {(err: Error, context: string) => void} deps.warn
   */
  constructor ({ store, shard, intervalMs, ttlMs, info, relist, tidy, warn }) {
    super()
    this.store = store
    this.shard = shard
    this.intervalMs = intervalMs
    this.ttlMs = ttlMs
    this.info = info
    this.relist = relist
    this.tidy = tidy
    this.warn = warn
    /** @type {NodeJS.Timeout | null} */
    this.timer = null
    /** ms (Date.now) of the last beat that succeeded; 0 = none */
    this.lastBeat = 0
    this.relistDue = false
    /** @type {boolean | null} whether beats succeed (null before the first) */
    this.up = null
    /** @type {Promise<void>} the beat in flight, if any */
    this.running = Promise.resolve()
    this.stopped = false
    /** @type {(() => void) | null} stops listening to the store's abandoned calls */
    this.stopWatching = null
  }

  /**
   * The first beat (it must succeed: a coordinator that cannot reach its store
   * does not start), then one every interval.
   */
  async start () {
    // A store call abandoned for lateness says what a request answered late says (quiet).
    this.stopWatching = this.store.onLate(() => this.quiet())
    await this.#beat()
    this.#schedule()
  }

  /** Whether the last beat succeeded within the TTL: this shard is in the registry. */
  get registered () {
    return this.lastBeat > 0 && Date.now() - this.lastBeat < this.ttlMs
  }

  /**
   * A request found the store quiet (it did not answer in time): down until
   * the next beat succeeds. Not on a store that fails in parts (a Cluster whose
   * master is failing over answers for the rest): there the beats alone say.
   */
  quiet () {
    if (this.store.failsInParts) return
    this.#state(false, new Error('the store did not answer a request in time'))
  }

  /** One beat now; failures are reported as `down`, never thrown. */
  async tick () {
    this.running = this.#beat().catch((err) => this.#state(false, err))
    await this.running
  }

  async #beat () {
    const beat = await this.store.beat(this.shard, this.info(), this.ttlMs)
    this.lastBeat = Date.now()
    this.#state(true)
    if (this.relistDue) {
      this.relistDue = false
      await this.relist()
    }
    if (beat.lost) {
      this.relistDue = true
      this.warn(new Error('the store lost this shard\'s data'), 'listing every peer again at the next beat')
    }
    await this.tidy()
    for (const shard of beat.dead) {
      this.store.reapShard(shard).catch((err) => this.warn(err, `reaping dead shard ${shard} failed (another shard retries when the lease ends)`))
    }
  }

  #schedule () {
    if (this.stopped) return
    this.timer = setTimeout(async () => {
      await this.tick()
      this.#schedule()
    }, this.intervalMs)
    this.timer.unref()
  }

  /**
   * @param {boolean} up
   * @param {Error} [err]
   */
  #state (up, err) {
    if (this.up === up) return
    this.up = up
    if (up) this.emit('up')
    else this.emit('down', err)
  }

  /** Stop beating, and take this shard out of the registry (best effort). */
  async stop () {
    this.stopped = true
    this.stopWatching?.()
    if (this.timer !== null) clearTimeout(this.timer)
    await this.running
    await this.store.leave(this.shard).catch((err) => this.warn(err, 'leaving the shard registry failed (the entry expires)'))
  }
}
