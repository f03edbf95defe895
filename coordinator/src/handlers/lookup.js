/**
 * `lookup`: which online peers hold an asset, or each of many (`hashes`,
 * protocol 2: a page asks once for all its assets). The store samples holders
 * on live shards (step 1 of the shared peer-selection rule,
 * `policy/peer-selection.js`); this handler ranks them and marks the first
 * one's entry for the asset (steps 2 and 3), exactly as the simulator does.
 * The holders it names are introduced to the asker: the only peers its
 * `connect`s may reach. Offers it carries (`offers`, protocol 3) go to the
 * best holders it names that the asker has no channel to, one each, as a
 * `connect` from the asker would; the reply says which (`offered`).
 */
import { ERRORS, MayghError } from '../../../protocol/index.js'
import { HolderRanking, rankKey } from '../policy/peer-selection.js'
import { relaySignal } from './connect.js'

/** @type {ReadonlySet<string>} the channels of an asker that names none */
const NONE = new Set()

/**
 * One ranking reused by every lookup: each is filled and read between two
 * awaits, so no two lookups ever hold it at once.
 * @type {HolderRanking<string>}
 */
const ranking = new HolderRanking(1, '')

/** @type {import('./index.js').Handler} */
export async function lookup (message, session, context) {
  const asker = session.requirePeer().peerId
  const connected = message.connected === undefined ? NONE : new Set(/** @type {string[]} */ (message.connected))
  /** @type {Record<string, any>} */
  let reply
  // The store's time and the lookups' outcomes are counted once per message, not per asset.
  const started = performance.now()
  let hits = 0
  if (message.hashes === undefined) {
    const hash = /** @type {string} */ (message.hash)
    const peers = await holdersOf(hash, asker, connected, session, context)
    if (peers.length > 0) hits++
    reply = { type: 'holders', hash, peers }
  } else {
    const hashes = [...new Set(/** @type {string[]} */ (message.hashes))]
    // The frame took one message of the rate limit; the batch costs one per asset, as the lookups one by one would.
    if (!session.takeToken(hashes.length - 1)) throw new MayghError(ERRORS.MGH_ERR_RATE_LIMITED, `a lookup of ${hashes.length} assets is over the rate`)
    const peers = await Promise.all(hashes.map((hash) => holdersOf(hash, asker, connected, session, context)))
    /** @type {Record<string, string[]>} */
    const found = {}
    for (let i = 0; i < hashes.length; i++) {
      found[hashes[i]] = peers[i]
      if (peers[i].length > 0) hits++
    }
    reply = { type: 'holders', found }
  }
  const { metrics, counters } = context
  metrics.observeStore('lookup', performance.now() - started)
  const asked = message.hashes === undefined ? 1 : Object.keys(reply.found).length
  counters.lookups += asked
  counters.lookupHits += hits
  metrics.countLookups(hits, asked - hits)
  const offers = /** @type {{ cid: string }[] | undefined} */ (message.offers)
  if (offers?.length) reply.offered = await handOffers(asker, offers, reply.peers ? [reply.peers] : Object.values(reply.found), connected, session, context)
  return reply
}

/**
 * Each offer to one holder: the best of each asset's in turn (the first
 * asset's best, the next asset's best, … then the second of each), skipping
 * those the asker is connected to or has offered already.
 * @param {string} asker
 * @param {{ cid: string }[]} offers
 * @param {string[][]} lists the holders named, per asset, best first
 * @param {ReadonlySet<string>} connected
 * @param {import('../session.js').Session} session
 * @param {import('./index.js').HandlerContext} context
 * @returns {Promise<Record<string, string>>} the cid each holder was handed, by peer id (a holder whose
 *   signal could not be delivered, having left, is not named)
 */
async function handOffers (asker, offers, lists, connected, session, context) {
  /** @type {string[]} */
  const to = []
  for (let rank = 0; to.length < offers.length && lists.some((l) => l.length > rank); rank++) {
    for (const list of lists) {
      const peer = list[rank]
      if (peer !== undefined && !connected.has(peer) && !to.includes(peer) && to.length < offers.length) to.push(peer)
    }
  }
  /** @type {Record<string, string>} */
  const offered = {}
  /** @type {Promise<void>[]} hand-overs to other shards' buses */
  const bus = []
  for (let i = 0; i < to.length; i++) {
    const peer = to[i]
    const cid = offers[i].cid
    try {
      const handing = relaySignal(asker, peer, offers[i], session, context)
      if (handing === undefined) offered[peer] = cid
      else bus.push(handing.then(() => { offered[peer] = cid }, () => {}))
    } catch {
      // Not delivered (the holder has left, or its budget is spent): not named.
    }
  }
  if (bus.length > 0) await Promise.all(bus)
  return offered
}

/**
 * The ranked holders of one asset, introduced to the asker.
 * @param {string} hash
 * @param {string} asker
 * @param {ReadonlySet<string>} connected peers the asker has an open channel to (ranked first)
 * @param {import('../session.js').Session} session
 * @param {import('./index.js').HandlerContext} context
 * @returns {Promise<string[]>}
 */
async function holdersOf (hash, asker, connected, session, { store, config, metrics, clock, warn }) {
  // Under pairWithinNetwork, the holders listed under the asker's network only (Session.keys).
  const key = session.scope + hash
  let holders
  try {
    holders = await store.sampleHolders(key, config.candidateSample)
  } catch (err) {
    // A store that is down or slow answers "no holders": the page goes to the origin at once.
    warn(err, 'lookup failed')
    holders = []
  }
  ranking.reset(config.maxHolders, asker)
  for (const { id, lastChosen } of holders) {
    const key = rankKey(connected.has(id), lastChosen)
    if (ranking.wants(id, key)) ranking.insert(id, key)
  }
  const introductions = session.introduced()
  // A holder it does not know takes one from its allowance (Session.newHolder); past it, only the holders it knows are named.
  const ranked = ranking.ids.slice(0, ranking.size)
  const peers = ranked.filter((peer) => introductions.peers.has(peer) || session.newHolder())
  if (peers.length < ranked.length) metrics.withheld.inc(ranked.length - peers.length)
  // The asker may now signal these holders (and they it, once it has).
  const now = session.now()
  for (const peer of peers) introductions.add(peer, now, true)
  // Not awaited: commands on one store connection run in order, so the next
  // lookup already sees this choice; the reply need not wait for it.
  if (peers.length > 0 && peers[0] === ranking.marked()) store.markChosen(key, peers[0], clock()).catch((err) => warn(err, 'markChosen failed'))
  return peers
}
