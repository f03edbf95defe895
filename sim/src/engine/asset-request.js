/**
 * An online adopter's request for an asset, as the engine answers it: the
 * origin without asking (media, the first page view ever), else the own
 * store, else a lookup and the client's tries (peer-lookup.js), else the
 * origin; then the client stores what it fetched and announces it
 * (`update`). Functions of the engine's state, as serving.js and
 * peer-lookup.js are.
 */
import { FLAG_MEDIA } from '../batch.js'
import { MAX_ENTRY_BYTES } from './client-stores.js'
import { ASSETS, LISTED, SLOT_STRIDE, TAG, TURN } from './online-slots.js'
import { replayPriority } from '../client-timing.js'
import { rankHolders, tryHolders } from './peer-lookup.js'
import { served } from './serving.js'
import { FIRST_VIEW } from './sessions.js'

/**
 * @param {import('./engine.js').Engine} e
 * @param {number} t
 * @param {number} c
 * @param {number} s its slot
 * @param {number} o
 * @param {number} size
 * @param {number} h hour index
 * @param {number} flags
 */
export function serveAsset (e, t, c, s, o, size, h, flags) {
  const stores = e.stores
  const hs = e.meters.series
  const index = e.slots.state[s * SLOT_STRIDE + ASSETS]++
  if ((flags & FLAG_MEDIA) !== 0 && e.mediaOrigin) {
    // a Range request the worker leaves to the network: not stored
    e.mediaRequests++
    e.mediaBytes += size
    fromOrigin(e, size, h)
    return
  }
  if (e.firstPageOrigin && e.pageState[c] === FIRST_VIEW) {
    // not yet under the worker: the network, then the page hands what it loaded to the worker
    e.firstPageRequests++
    e.firstPageBytes += size
    fromOrigin(e, size, h)
    const held = stores.find(c, o)
    if (held === -1) store(e, t, c, s, o, size, h)
    else stores.touch(c, held)
    return
  }
  const own = stores.find(c, o)
  if (own !== -1) {
    stores.touch(c, own)
    e.cacheRequests++
    e.cacheBytes += size
    e.oracleRequests++
    e.oracleBytes += size
    hs.cacheBytes[h] += size
    hs.oracleBytes[h] += size
    return
  }
  e.meters.lookups.add(t)
  hs.lookups[h]++
  // the page's loads start at successive holders (peer-fetch.js `turn`): every lookup takes a turn
  if (e.pageChannels) e.turn = e.slots.state[s * SLOT_STRIDE + TURN]++
  let from = -1
  if (e.holders.count(o) > 0 && rankHolders(e, s, o, size) > 0) {
    // the requester holds no copy, so every sampled holder is another online client
    e.oracleRequests++
    e.oracleBytes += size
    hs.oracleBytes[h] += size
    from = tryHolders(e, s, size, replayPriority(flags, index, e.viewportAssets))
  }
  if (from === -1) {
    fromOrigin(e, size, h)
  } else {
    e.peerRequests++
    e.peerBytes += size
    hs.peerBytes[h] += size
    served(e, from, size, t)
  }
  store(e, t, c, s, o, size, h)
}

/**
 * @param {import('./engine.js').Engine} e
 * @param {number} size bytes the origin sent
 * @param {number} h
 */
export function fromOrigin (e, size, h) {
  e.originRequests++
  e.originBytes += size
  e.meters.series.originBytes[h] += size
}

/**
 * Puts a fetched object in the client's store, evicting least recently used
 * entries to stay under quota, and lists it in the index (one `update`).
 * @param {import('./engine.js').Engine} e
 * @param {number} t
 * @param {number} c
 * @param {number} s its slot
 * @param {number} o
 * @param {number} size
 * @param {number} h
 */
function store (e, t, c, s, o, size, h) {
  if (size > e.quota || size > MAX_ENTRY_BYTES) {
    e.tooBig++
    return
  }
  const stores = e.stores
  const holders = e.holders
  const tag = e.slots.state[s * SLOT_STRIDE + TAG]
  // a session that does not serve lists nothing, so it has nothing to unlist
  const listed = e.slots.state[s * SLOT_STRIDE + LISTED] === 1
  while (stores.bytes[c] + size > e.quota) {
    const victim = stores.lruOf(c)
    if (listed) holders.remove(stores.objectAt(c, victim), s, tag)
    stores.removeAt(c, victim)
    e.evictions++
  }
  stores.insert(c, o, size)
  if (!listed) return
  holders.add(o, s, tag)
  e.meters.updates.add(t)
  e.meters.series.updates[h]++
}
