/**
 * `update`: assets a peer added to or removed from its store. Removals apply
 * first, so a hash in both lists ends up held. Only the real difference reaches
 * the store, worked out without copying what the peer holds.
 * `serving: false` (the visitor went receive-only: its upload budget is spent,
 * it opted out, Save-Data) takes everything it listed out, and nothing it
 * announces is listed until an update says `serving: true` again.
 */
import { ERRORS, MayghError } from '../../../protocol/index.js'
import { badField, optionalHashList } from '../fields.js'

/** Changes the peer's state: handled one at a time, in order with its other changes (Session.enqueue). */
export const ordered = true

/** @type {string[]} */
const NONE = []

/** Lists up to this long are searched in place; longer ones through a Set, which costs more to make than a short scan. */
const SHORT = 8

/**
 * @param {string[]} list
 * @returns {string[]} its hashes once each, in order: itself when it has fewer than two (an update
 *   of one fetched asset and one evicted makes no Set and no copy)
 */
const unique = (list) => list.length < 2 ? list : [...new Set(list)]

/** @type {import('./index.js').Validator} */
export function validate (m, limits) {
  optionalHashList(m, 'add', limits.maxAssetsPerMessage)
  optionalHashList(m, 'remove', limits.maxAssetsPerMessage)
  if (m.serving !== undefined && typeof m.serving !== 'boolean') throw badField('serving', 'a boolean')
}

/** @type {import('./index.js').Handler} */
export function handle (message, session, { store, config, counters, coordinator, metrics }) {
  const peer = session.requirePeer()
  if (peer.fetchOnly) throw badField('add', 'nothing: this peer joined fetch-only')
  // Quarantined: acknowledged, not listed (quarantine.js).
  if (peer.quarantined) return { type: 'updated', holding: 0 }
  if (typeof message.serving === 'boolean') {
    if (peer.serving && !message.serving) metrics.countWithdrawal()
    peer.serving = message.serving
  }
  const held = peer.assets
  const adds = peer.serving ? unique(/** @type {string[]} */ (message.add ?? NONE)) : NONE
  const added = adds.filter((hash) => !held.has(hash))
  /** @type {string[]} */
  let removed
  if (!peer.serving) removed = [...held]
  else {
    // A hash in both lists ends up held: not removed. A long list is searched through a Set.
    const alsoAdded = adds.length > SHORT ? new Set(adds) : null
    removed = unique(/** @type {string[]} */ (message.remove ?? NONE)).filter((hash) => held.has(hash) && !(alsoAdded === null ? adds.includes(hash) : alsoAdded.has(hash)))
  }
  const size = held.size - removed.length + added.length
  if (size > config.maxAssetsPerPeer) {
    throw new MayghError(ERRORS.MGH_ERR_TOO_MANY_ASSETS, `${size} > ${config.maxAssetsPerPeer}`)
  }
  const grows = added.length - removed.length
  if (grows > 0 && coordinator.holdings + grows > config.maxHoldings) throw new MayghError(ERRORS.MGH_ERR_CAPACITY, `this coordinator lists ${config.maxHoldings} holdings at most`)
  coordinator.holdings += grows
  const started = performance.now()
  /** @param {unknown} err the store's: the change may have been applied or not */
  const failed = (err) => {
    metrics.observeStore('update', performance.now() - started)
    coordinator.holdings -= grows
    // A timeout cannot tell: whatever the store lists for these hashes is taken out when the peer leaves.
    const unsure = (session.unsure ??= new Set())
    for (const hash of added) unsure.add(hash)
    for (const hash of removed) unsure.add(hash)
    throw err
  }
  const applied = () => {
    metrics.observeStore('update', performance.now() - started)
    for (const hash of removed) held.delete(hash)
    for (const hash of added) held.add(hash)
    counters.updates++
    return { type: 'updated', holding: held.size }
  }
  let done
  try {
    done = store.updatePeer(peer.peerId, peer.keys(added), peer.keys(removed))
  } catch (err) {
    return failed(err)
  }
  // The in-process store answers at once: then so does this handler, with no promise.
  return done instanceof Promise ? done.then(applied, failed) : applied()
}
