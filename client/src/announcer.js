/**
 * Keeps the coordinator's list of our holdings in step with the cache: after
 * changes it waits until they have been still for `delayMs` (at most 8 ×
 * `delayMs`: so a page's burst of stores becomes one message),
 * then sends the difference between what we hold and what we last announced
 * as `update {add, remove}`, split to the coordinator's per-message limit and
 * capped at its per-peer limit. `join` resets the announced set to its `have`.
 * While the visitor does not serve (uplink.js: receive-only, its upload
 * budget spent), it announces nothing: one `update {serving: false}` has the
 * coordinator take everything it listed for us out at once, and the first
 * update after it says `serving: true` again.
 */
export class Announcer {
  /** @type {ConstructorParameters<typeof Announcer>[0]} */
  #options
  /** @type {Set<string>} what the coordinator lists for us, as far as we know */
  #announced = new Set()
  /** the coordinator's count from its last `updated` (or our `have` on join) */
  held = 0
  /** whether the coordinator lists us (it does after a join, until `serving: false`) */
  #listed = true
  /** @type {ReturnType<typeof setTimeout> | undefined} the next flush, while one is due */
  #timer
  /** @type {number | undefined} when the first change not yet announced came */
  #since
  #inflight = 0
  /** @type {(() => void)[]} */
  #waiters = []

  /**
   * @param {object} options
   * @param {import('./signaling.js').Signaling} options.signaling
   * @param {() => string[]} options.holdings held hashes, most recently used first
   * @param {() => boolean} options.serving whether to be listed as a holder at all
   * @param {number} options.delayMs
   * @param {number} [options.timeoutMs] an unanswered update counts as lost after this
   */
  constructor (options) {
    this.#options = options
  }

  /** A join was acknowledged with `have`. @param {string[]} have */
  welcomed (have) {
    this.#listed = have.length > 0 || this.#options.serving()
    this.#announced = new Set(have)
    this.held = have.length
    this.schedule()
  }

  /**
   * Holdings changed: announce them once they have been still for `delayMs`,
   * and at most 8 × `delayMs` after the first change, so that a page's burst
   * of stores is one message.
   */
  schedule () {
    const { delayMs } = this.#options
    this.#since ??= Date.now()
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => this.flush(), Math.min(delayMs, this.#since + 8 * delayMs - Date.now()))
  }

  #diff () {
    const desired = this.#options.serving() ? this.#options.holdings() : []
    const want = new Set(desired)
    return {
      add: desired.filter((h) => !this.#announced.has(h)),
      remove: [...this.#announced].filter((h) => !want.has(h))
    }
  }

  flush () {
    clearTimeout(this.#timer)
    this.#timer = this.#since = undefined
    const { signaling } = this.#options
    if (!signaling.joined) return this.#check()
    if (!this.#options.serving()) {
      if (this.#listed) {
        this.#listed = false
        this.#announced.clear()
        this.#send({ type: 'update', serving: false })
      }
      return this.#check()
    }
    const resumed = !this.#listed
    this.#listed = true
    const { maxAssetsPerMessage: per, maxAssetsPerPeer } = signaling.limits
    const { add, remove } = this.#diff()
    add.length = Math.max(0, Math.min(add.length, maxAssetsPerPeer - this.#announced.size + remove.length))
    for (let i = 0; i < Math.max(add.length, remove.length, +resumed); i += per) {
      const msg = { type: 'update', add: add.slice(i, i + per), remove: remove.slice(i, i + per), ...(resumed && !i && { serving: true }) }
      for (const h of msg.remove) this.#announced.delete(h)
      for (const h of msg.add) this.#announced.add(h)
      this.#send(msg)
    }
    this.#check()
  }

  /** @param {Record<string, unknown>} msg an update */
  #send (msg) {
    this.#inflight++
    this.#options.signaling.request(msg, this.#options.timeoutMs ?? 10000)
      .then((reply) => { if (Number.isInteger(reply.holding)) this.held = reply.holding })
      .catch(() => {}) // refused or lost: the next join re-announces everything
      .finally(() => {
        this.#inflight--
        this.#check()
      })
  }

  /** In step: nothing waiting to be sent, nothing unanswered (or no coordinator to tell). */
  synced () {
    if (!this.#options.signaling.joined) return true
    if (this.#timer !== undefined || this.#inflight || this.#listed !== this.#options.serving()) return false
    const { add, remove } = this.#diff()
    return remove.length === 0 && (add.length === 0 || this.#announced.size >= this.#options.signaling.limits.maxAssetsPerPeer)
  }

  #check () {
    if (this.synced()) for (const w of this.#waiters.splice(0)) w()
  }

  /** @returns {Promise<void>} resolves once {@link synced} */
  settled () {
    if (this.synced()) return Promise.resolve()
    if (this.#timer === undefined && !this.#inflight) this.schedule()
    return new Promise((resolve) => this.#waiters.push(resolve))
  }
}
