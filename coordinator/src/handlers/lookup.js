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
import { ERRORS, LIMITS, MayghError } from '../../../protocol/index.js'
import { HolderRanking, rankKey } from '../../../policy/peer-selection.js'
import { MAX_SIGNAL_DEPTH, badField, isAssetName, isPeerId, isSignal, lookupHashes } from '../fields.js'
import { relaySignal } from './connect.js'

/** longest `cid` an offer carried by a lookup may have (the client's are 10 characters) */
export const MAX_CID_LENGTH = 32

/** Reads or relays: runs as it comes, after the peer's earlier changes but holding up none (Session.after). */
export const ordered = false

/** @type {import('./index.js').Validator} */
export function validate (m) {
  if (m.hashes === undefined) {
    if (!isAssetName(m.hash)) throw badField('hash', 'an SRI sha256 string')
  } else {
    if (m.hash !== undefined) throw badField('hashes', 'either hash or hashes, not both')
    lookupHashes(m)
  }
  if (m.connected !== undefined) {
    const max = LIMITS.maxConnected
    if (!Array.isArray(m.connected) || m.connected.length > max) throw badField('connected', `an array of at most ${max} peer ids`)
    for (const id of m.connected) if (!isPeerId(id)) throw badField('connected', 'peer ids')
  }
  if (m.offers !== undefined) {
    const max = LIMITS.maxLookupOffers
    if (!Array.isArray(m.offers) || m.offers.length > max || !m.offers.every(isOffer)) throw badField('offers', `an array of at most ${max} signals, each with a distinct "cid" (1 to ${MAX_CID_LENGTH} characters) and nested at most ${MAX_SIGNAL_DEPTH} deep`)
    if (new Set(m.offers.map((o) => o.cid)).size !== m.offers.length) throw badField('offers', 'each with a distinct "cid"')
  }
}

/** @param {any} o @returns {boolean} a signal with a connection id: what a lookup's `offers` hold */
const isOffer = (o) => isSignal(o) && typeof o.cid === 'string' && o.cid.length > 0 && o.cid.length <= MAX_CID_LENGTH

/** @type {ReadonlySet<string>} the channels of an asker that names none */
const NONE = new Set()

/**
 * One ranking reused by every asset of every lookup: each is filled and read
 * with no await in between, so no two ever hold it at once.
 * @type {HolderRanking<string>}
 */
const ranking = new HolderRanking(1, '')

/** @type {import('./index.js').Handler} */
export function handle (message, session, context) {
  const asker = session.requirePeer().peerId
  const many = message.hashes !== undefined
  const hashes = /** @type {string[]} */ (many ? [...new Set(/** @type {string[]} */ (message.hashes))] : [message.hash])
  // The frame took one message of the rate limit; a batch costs one per asset, as the lookups one by one would.
  if (many && !session.takeToken(hashes.length - 1)) throw new MayghError(ERRORS.MGH_ERR_RATE_LIMITED, `a lookup of ${hashes.length} assets is over the rate`)
  const { store, config, warn } = context
  // One store call for every asset of the message; its time and the lookups' outcomes are counted once.
  const started = performance.now()
  // Under pairWithinNetwork, each key names the asker's network too (Session.keys): the holders listed there only.
  const keys = session.keys(hashes)
  let samples
  try {
    samples = store.sampleHolders(keys, config.candidateSample)
  } catch (err) {
    samples = noHolders(err, hashes, warn)
  }
  // The in-process store answers at once: then so does this handler, with no promise.
  if (!(samples instanceof Promise)) return answer(message, asker, hashes, keys, samples, started, session, context)
  return samples.then(
    (found) => answer(message, asker, hashes, keys, found, started, session, context),
    (err) => answer(message, asker, hashes, keys, noHolders(err, hashes, warn), started, session, context))
}

/**
 * A store that is down or slow answers "no holders": the page goes to the origin at once.
 * @param {unknown} err what the store threw
 * @param {string[]} hashes
 * @param {(err: Error, context: string) => void} warn
 * @returns {import('../store/store.js').Holder[][]}
 */
function noHolders (err, hashes, warn) {
  warn(/** @type {Error} */ (err), 'lookup failed')
  return hashes.map(() => [])
}

/**
 * The rest of a lookup once the store has sampled each asset's holders: each
 * list ranked and introduced (steps 2 and 3), the first holders marked, the
 * offers handed over, the reply.
 * @param {import('../message-parser.js').Message} message
 * @param {string} asker
 * @param {string[]} hashes the assets asked for, each once
 * @param {readonly string[]} keys their store keys
 * @param {import('../store/store.js').Holder[][]} samples
 * @param {number} started when the store was asked (performance.now)
 * @param {import('../session.js').Session} session
 * @param {import('./index.js').HandlerContext} context
 * @returns {Record<string, any> | Promise<Record<string, any>>} the reply; a promise only while an offer is handed to another shard
 */
function answer (message, asker, hashes, keys, samples, started, session, context) {
  const { store, metrics, counters, clock, warn } = context
  metrics.observeStore('lookup', performance.now() - started)
  const connected = message.connected === undefined ? NONE : new Set(/** @type {string[]} */ (message.connected))
  /** @type {[string, string][]} each asset's first holder, marked as chosen (step 3) */
  const marks = []
  const peers = samples.map((holders, i) => rank(holders, keys[i], asker, connected, session, context, marks))
  if (marks.length > 0) {
    // Not awaited: the store runs one connection's calls in order, so the next lookup already sees these choices.
    try {
      const marking = store.markChosen(marks, clock())
      if (marking instanceof Promise) marking.catch((err) => warn(err, 'markChosen failed'))
    } catch (err) {
      warn(/** @type {Error} */ (err), 'markChosen failed')
    }
  }
  const hits = peers.reduce((n, p) => p.length > 0 ? n + 1 : n, 0)
  counters.lookups += hashes.length
  counters.lookupHits += hits
  metrics.countLookups(hits, hashes.length - hits)
  /** @type {Record<string, any>} */
  let reply
  if (message.hashes !== undefined) {
    /** @type {Record<string, string[]>} */
    const found = {}
    for (let i = 0; i < hashes.length; i++) found[hashes[i]] = peers[i]
    reply = { type: 'holders', found }
  } else {
    reply = { type: 'holders', hash: hashes[0], peers: peers[0] }
  }
  const offers = /** @type {{ cid: string }[] | undefined} */ (message.offers)
  if (!offers?.length) return reply
  const offered = handOffers(asker, offers, peers, connected, session, context)
  if (offered instanceof Promise) return offered.then((o) => { reply.offered = o; return reply })
  reply.offered = offered
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
 * @returns {Record<string, string> | Promise<Record<string, string>>} the cid each holder was handed, by
 *   peer id (a holder whose signal could not be delivered, having left, is not named); a promise
 *   only while a hand-over to another shard's bus is on its way
 */
function handOffers (asker, offers, lists, connected, session, context) {
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
  if (bus.length === 0) return offered
  return Promise.all(bus).then(() => offered)
}

/**
 * Steps 2 and 3 for one asset: its sampled holders ranked, introduced to the
 * asker, and the first one's entry noted in `marks`.
 * @param {import('../store/store.js').Holder[]} holders the store's sample
 * @param {string} key the asset's store key
 * @param {string} asker
 * @param {ReadonlySet<string>} connected peers the asker has an open channel to (ranked first)
 * @param {import('../session.js').Session} session
 * @param {import('./index.js').HandlerContext} context
 * @param {[string, string][]} marks
 * @returns {string[]} the holders handed out, best first
 */
function rank (holders, key, asker, connected, session, { config, metrics }, marks) {
  ranking.reset(config.maxHolders, asker)
  for (const { id, lastChosen } of holders) {
    const order = rankKey(connected.has(id), lastChosen)
    if (ranking.wants(id, order)) ranking.insert(id, order)
  }
  if (ranking.size === 0) return []
  const introductions = session.introduced()
  const now = session.now()
  /** @type {string[]} */
  const peers = []
  let withheld = 0
  for (let i = 0; i < ranking.size; i++) {
    const peer = ranking.ids[i]
    // The asker may now signal these holders (and they it, once it has). A holder it does not know takes
    // one from its allowance (Session.newHolder); past it, only the holders it knows are named.
    if (introductions.renew(peer, now, true)) peers.push(peer)
    else if (session.newHolder()) {
      introductions.insert(peer, now, true)
      peers.push(peer)
    } else withheld++
  }
  if (withheld > 0) metrics.withheld.inc(withheld)
  if (peers.length > 0 && peers[0] === ranking.marked()) marks.push([key, peers[0]])
  return peers
}
