/**
 * The shapes of the reference model's state (reference-model.js), plainly:
 * sessions, peer records, listings, index entries and stores as objects,
 * Maps and arrays; and the list operations that keep the engine's orders
 * (a removal moves the last element into the hole, as the engine's lists do).
 */

/**
 * One online session of a client.
 * @typedef {object} Session
 * @property {number} client
 * @property {boolean} open false once it ended
 * @property {number} until online until then (Infinity while the session goes on)
 * @property {number} uploaded bytes served to peers in this session
 * @property {number} lastAt the time of its latest request (−∞ before the first)
 * @property {Page} page its current peer record (the coordinator's peer id: a page view's, or the session's)
 * @property {number} turn lookups its current page has made
 * @property {number} assets asset requests its current page view has made (the first few are in the viewport)
 * @property {Map<Page, number>} channels peer records it opened a data channel to (or tried to) → when the channel opens (+∞: failed)
 * @property {Set<Page>} reported peer records its current page view has reported (`no_channel`)
 * @property {Listing | null} listing what the coordinator lists for it, null while it does not serve
 */
/** @typedef {{ since: number }} Page a peer record, joined at the coordinator's clock `since` */
/** @typedef {{ session: Session, live: boolean }} Listing one stretch of a session's serving: its index entries are stale once it ends */
/**
 * One entry of an asset's holder list in the coordinator's index.
 * @typedef {object} Holding
 * @property {Listing} listing
 * @property {number} chosen the coordinator's clock when a lookup of this asset last marked it (0 never)
 */
/** @typedef {{ entries: Entry[], lru: Map<number, Entry>, bytes: number }} Store entries in storage order, and by recency (least recent first) */
/** @typedef {{ object: number, size: number }} Entry */
/** @typedef {{ untraversable: boolean, receiveOnly: boolean }} Traits */

/** @param {Store} store @param {number} o @param {Entry} entry now the most recently used */
export function touch (store, o, entry) {
  store.lru.delete(o)
  store.lru.set(o, entry)
}

/** Removes `list[pos]` by moving the last element there, as the engine's lists do. @template T @param {T[]} list @param {number} pos */
export function removeAt (list, pos) {
  if (pos === -1) throw new Error('reference model: removing a record that is not listed')
  const last = /** @type {T} */ (list.pop())
  if (pos < list.length) list[pos] = last
}

/** @template K, V @param {Map<K, V>} map @param {K} key @param {() => V} make @returns {V} `map.get(key)`, made first if absent */
export function getOr (map, key, make) {
  let value = map.get(key)
  if (value === undefined) map.set(key, (value = make()))
  return value
}
