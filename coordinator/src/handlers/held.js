/**
 * `held` (protocol 5): which of some assets any live visitor holds, as
 * `GET /held` says (http-routes.js), over a socket already open: a service
 * worker's own (client/src/worker-socket.js), which asks it for the requests
 * its page makes before its script has joined, so that what nobody holds goes
 * to the origin at once. Over that socket the answer costs one round trip;
 * over HTTP a new connection costs one more (two with TLS), and a browser
 * keeps one to the coordinator only seconds after its last request.
 *
 * Names no holder and introduces nobody (a lookup does that). Each asset it
 * finds nobody holds counts as a lookup that missed (the page makes none); a
 * held one is counted by the lookup its page makes next. Each asset costs one
 * message of the sender's rate limit, as a lookup's do. A store that fails or
 * is slow answers MGH_ERR_STORE (the worker then waits for its page).
 */
import { ERRORS, MayghError } from '../../../protocol/index.js'
import { lookupHashes } from '../fields.js'

/** Reads or relays: runs as it comes, after the peer's earlier changes but holding up none (Session.after). */
export const ordered = false

/** @type {import('./index.js').Validator} */
export function validate (m) {
  lookupHashes(m)
}

/** @type {import('./index.js').Handler} */
export function handle (message, session, context) {
  session.requirePeer()
  const hashes = [...new Set(/** @type {string[]} */ (message.hashes))]
  // The frame took one message of the rate limit; the rest cost one per asset, as a lookup's do.
  if (!session.takeToken(hashes.length - 1)) throw new MayghError(ERRORS.MGH_ERR_RATE_LIMITED, `a held check of ${hashes.length} assets is over the rate`)
  const held = heldAmong(hashes, session.keys(hashes), context)
  return held instanceof Promise ? held.then((list) => ({ type: 'held', held: list })) : { type: 'held', held }
}

/**
 * The ones of `hashes` some live visitor holds, counted (a check; the misses
 * as lookups that missed): `held` and `GET /held` alike.
 * @param {string[]} hashes each once
 * @param {readonly string[]} keys their store keys (under pairWithinNetwork, the asker's network's)
 * @param {Pick<import('./index.js').HandlerContext, 'store' | 'metrics' | 'counters' | 'warn'>} context
 * @returns {string[] | Promise<string[]>} at once from the in-process store
 * @throws {MayghError} MGH_ERR_STORE (or a promise rejected with it): the store failed
 */
export function heldAmong (hashes, keys, { store, metrics, counters, warn }) {
  const started = performance.now()
  /** @param {import('../store/store.js').Holder[][]} found */
  const count = (found) => {
    metrics.observeStore('lookup', performance.now() - started)
    metrics.countHeldCheck()
    const misses = found.filter((holders) => holders.length === 0).length
    counters.lookups += misses
    metrics.countLookups(0, misses)
    return hashes.filter((_, i) => found[i].length > 0)
  }
  /** @param {unknown} err @returns {never} */
  const failed = (err) => {
    metrics.observeStore('lookup', performance.now() - started)
    warn(/** @type {Error} */ (err), 'held failed')
    throw new MayghError(ERRORS.MGH_ERR_STORE)
  }
  let found
  try {
    found = store.sampleHolders(keys, 1)
  } catch (err) {
    failed(err)
  }
  return found instanceof Promise ? found.then(count, failed) : count(found)
}
