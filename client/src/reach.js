/**
 * Whether this visitor's peer channels open at all, remembered across its
 * pages (localStorage `maygh-reach`: the channels it tried in a row that did
 * not open within the pass-over, none having opened since). Behind a NAT no
 * peer can traverse, every channel fails, with every holder, on every page;
 * without this, each of its requests waited out the hedge deadline before
 * the origin was asked (the crowd replay's slowest page views: README,
 * "Savings, measured").
 * Once `unreached` (policy/hedge-rule.js), its requests race the origin at once
 * while peers are still tried, so the first channel that opens, in either
 * direction, clears it; and a page that starts unreached lists nothing
 * (peers.js), since its askers would only wait out the pass-over on it.
 */
import { unreached } from '../../policy/hedge-rule.js'
import { read, write } from './storage.js'

const KEY = 'maygh-reach'

export class Reach {
  /** @type {Storage | undefined} */
  #storage
  /** the count as this page last set it: what counts when storage is unavailable */
  #own = 0

  /** @param {Storage | undefined} storage the page's localStorage (none, or blocked: remembered for this page only) */
  constructor (storage) {
    this.#storage = storage
  }

  /** channels tried in a row that did not open (another tab's count included) */
  count () {
    const v = read(this.#storage, KEY)
    return v ? Number(v) || 0 : this.#own
  }

  /** @param {number} n */
  #set (n) {
    this.#own = n
    write(this.#storage, KEY, String(n))
  }

  /** A channel this visitor tried did not open within the pass-over, or failed. */
  miss () {
    this.#set(this.count() + 1)
  }

  /** A channel opened, either way. */
  opened () {
    if (this.count()) this.#set(0)
  }

  /** Whether this visitor's requests race the origin at once (policy/hedge-rule.js unreached). */
  unreached () {
    return unreached(this.count())
  }
}
