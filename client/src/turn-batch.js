/**
 * Keys asked for in one turn of the event loop, sent as one request: the
 * first key opens a batch, a timer of 0 sends it (at most `max` keys: the
 * next key after that opens another), and every key's caller gets the one
 * reply. The coordinator's `lookup {hashes}` (peer-fetch.js) and `GET /held`
 * (held-check.js) gather a page's requests so.
 * @template C, R
 */
export class TurnBatch {
  /** @type {number} */
  #max
  /** @type {() => C} */
  #open
  /** @type {(keys: string[], opened: C) => Promise<R>} */
  #send
  /** @type {{ keys: Set<string>, reply: Promise<R> } | null} the batch being gathered this turn */
  #gathering = null

  /**
   * @param {number} max keys per request
   * @param {() => C} open called as a batch opens (what its request will carry, prepared meanwhile)
   * @param {(keys: string[], opened: C) => Promise<R>} send
   */
  constructor (max, open, send) {
    this.#max = max
    this.#open = open
    this.#send = send
  }

  /**
   * @param {string} key
   * @returns {Promise<R>} the reply to the request that carried it
   */
  add (key) {
    let batch = this.#gathering
    if (!batch) {
      /** @type {Set<string>} */
      const keys = new Set()
      const opened = this.#open()
      const b = batch = this.#gathering = {
        keys,
        reply: new Promise((resolve) => setTimeout(resolve)).then(() => {
          if (this.#gathering === b) this.#gathering = null
          return this.#send([...keys], opened)
        })
      }
    }
    batch.keys.add(key)
    if (batch.keys.size >= this.#max) this.#gathering = null
    return batch.reply
  }
}
