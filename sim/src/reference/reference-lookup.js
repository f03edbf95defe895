/**
 * The reference model's lookup (reference-model.js), plainly: the
 * coordinator's side by the shared rule (sample, rank, mark), and the
 * client's tries of the holders it names, racing the origin. What
 * peer-lookup.js does over the engine's typed arrays, restated; functions of
 * the model's state.
 */
import { HolderRanking, rankKey, sampleNext, sampleStart } from '../../../policy/peer-selection.js'
import { outrun, passOverS, raceAt, requestDeadline } from '../client-timing.js'
import { reportNoChannel } from './reference-serving.js'
import { removeAt } from './reference-state.js'

/** @typedef {import('./reference-model.js').ReferenceModel} ReferenceModel */
/** @typedef {import('./reference-state.js').Session} Session */
/** @typedef {import('./reference-state.js').Holding} Holding */

/**
 * A lookup by the shared rule: sample (stale records are read, not counted,
 * then dropped), rank (asking `accepts` only of holders the ranking wants),
 * mark the first one's entry for `o`; then the asker tries them.
 * @param {ReferenceModel} m @param {Session} asker @param {number} o @param {number} size @param {number} turn the page's turn
 * @param {import('../../../policy/hedge-rule.js').Priority} priority
 * @returns {Session | null} the holder that served
 */
export function lookup (m, asker, o, size, turn, priority) {
  const list = m.listOf(o)
  const ranking = new HolderRanking(m.config.maxHolders, asker)
  const want = m.config.candidateSample
  const stale = []
  let online = 0
  for (let pos = sampleStart(list.length, want, m.rng), read = 1; pos !== -1; pos = sampleNext(pos, read++, online, list.length, want)) {
    const { listing, chosen } = list[pos]
    if (!listing.live) {
      stale.push(pos)
      continue
    }
    online++
    const holder = listing.session
    const connected = isOpen(m, asker, holder)
    const key = rankKey(connected, chosen)
    if (ranking.wants(holder, key) && accepts(m, holder, connected, size)) ranking.insert(holder, key)
  }
  for (const pos of stale.sort((a, b) => b - a)) removeAt(list, pos)
  if (online > 0) m.count('oracle', size)
  if (ranking.size === 0) return null
  m.n.lookupHits++
  const marked = /** @type {Holding} */ (list.find((entry) => entry.listing === /** @type {Session} */ (ranking.marked()).listing))
  marked.chosen = ++m.clock
  return tryHolders(m, asker, ranking.ids.slice(0, ranking.size), size, turn, priority)
}

/**
 * The asker tries the holders (peer-lookup.js `tryHolders`, plainly).
 * @param {ReferenceModel} m @param {Session} asker @param {Session[]} ranked @param {number} size @param {number} turn
 * @param {import('../../../policy/hedge-rule.js').Priority} priority
 * @returns {Session | null}
 */
function tryHolders (m, asker, ranked, size, turn, priority) {
  const { setupTime, lookupTime, originTtfb, originRate, peerRate } = m.config
  const hedged = m.config.hedge !== 'off'
  const deadline = hedged ? raceAt(requestDeadline(m.config, size, priority), m.failedInRow.get(asker.client) ?? 0) : Infinity
  const t = m.now
  let order = ranked
  if (m.config.channels === 'page') {
    order = ranked.filter((holder) => asker.channels.get(holder.page) !== Infinity)
    const start = order.length > 0 ? turn % order.length : 0
    order = [...order.slice(start), ...order.slice(0, start)]
  }
  let tau = lookupTime
  for (const holder of order) {
    const ready = asker.channels.get(holder.page)
    let firstByte
    if (ready !== undefined && ready <= t) {
      m.n.reused++
      firstByte = tau
    } else if (ready === Infinity) {
      continue
    } else if (ready !== undefined) {
      m.n.setupsShared++
      firstByte = Math.max(tau, ready - t)
    } else {
      m.n.attempts++
      if (fails(m, asker, holder)) {
        m.n.failures++
        m.failedInRow.set(asker.client, (m.failedInRow.get(asker.client) ?? 0) + 1)
        reportNoChannel(m, asker, holder)
        if (m.config.channels === 'page') asker.channels.set(holder.page, Infinity)
        if (hedged) tau += passOverS(setupTime)
        continue
      }
      asker.channels.set(holder.page, hedged ? t + tau + setupTime : t)
      m.failedInRow.delete(asker.client)
      m.failedInRow.delete(holder.client)
      firstByte = tau + setupTime
    }
    if (!hedged || firstByte <= deadline) return holder
    if (!outrun(firstByte + size / peerRate, deadline, originTtfb + size / originRate)) return holder
    m.n.racesLost++
    return null
  }
  return null
}

/** @param {ReferenceModel} m @param {Session} asker @param {Session} holder @returns {boolean} whether the asker has an open channel to the holder's current peer record */
function isOpen (m, asker, holder) {
  const ready = asker.channels.get(holder.page)
  return ready !== undefined && ready <= m.now
}

/** @param {ReferenceModel} m @param {Session} asker @param {Session} holder @returns {boolean} whether a new connection between them fails */
function fails (m, asker, holder) {
  if (m.traitsOf(asker.client).untraversable || m.traitsOf(holder.client).untraversable) return true
  if (m.config.hedge !== 'off' && m.config.setupTime > passOverS(m.config.setupTime)) return true
  return m.config.failRate > 0 && m.rng.random() < m.config.failRate
}

/**
 * Whether a holder can serve now: online through a connection set-up (if it needs one), under its upload cap.
 * @param {ReferenceModel} m @param {Session} holder @param {boolean} connected @param {number} size @returns {boolean}
 */
function accepts (m, holder, connected, size) {
  const { setupTime, uploadRate, uploadBurst } = m.config
  if (setupTime > 0 && !connected && holder.until < m.now + setupTime) {
    m.n.setupRefusals++
    return false
  }
  if (uploadRate === Infinity) return true
  const bucket = m.bucket(holder.client)
  bucket.tokens = Math.min(uploadBurst, bucket.tokens + (m.now - bucket.at) * uploadRate)
  bucket.at = m.now
  return bucket.tokens >= size
}
