/**
 * The coordinator's side of a lookup, and the client's tries, as the engine
 * models them: the shared peer-selection rule's sample, ranking and mark
 * (`sampleStart`, `sampleNext`, `HolderRanking`, `rankKey`, imported from
 * the coordinator, not reimplemented) over the engine's typed arrays, and the
 * requester trying the returned holders, racing the origin (the client's
 * hedge). Functions of the engine's state, kept apart from the engine's
 * bookkeeping.
 *
 * Random draws, in this order per lookup (reference/reference-model.js takes
 * the same ones, which is what lets it agree with the engine exactly): the
 * sample's start, only when the holder list (stale records included) is
 * longer than `candidateSample`; then one per new connection tried, only when
 * `failRate` > 0 and the connection has not already failed for a reason that
 * needs no draw (an untraversable end; with the hedge, a set-up longer than
 * the client waits).
 */
import { rankKey, sampleNext, sampleStart } from '../../../policy/peer-selection.js'
import { growTo } from '../batch.js'
import { outrun, raceAt, requestDeadline } from '../client-timing.js'
import { H_CHOSEN, H_SLOT, H_STRIDE, H_TAG } from './holder-index.js'
import { CLIENT, MARK, PAGE, SINCE, SLOT_STRIDE, TAG } from './online-slots.js'
import { reportNoChannel } from './no-channel-reports.js'
import { UNTRAVERSABLE } from './serving.js'

/** the largest `H_CHOSEN` an int32 holds */
const CLOCK_LIMIT = 0x7fffffff

// The loops below address fields by number, as `state[(slot << 3) + 1]` for
// a slot's MARK and `pool[rec + 2]` for a holder record's H_CHOSEN: checked
// here against the layouts they assume.
const LAYOUT = [SLOT_STRIDE, TAG, MARK, PAGE, SINCE, H_STRIDE, H_SLOT, H_TAG, H_CHOSEN]
if (LAYOUT.join() !== '8,0,1,3,4,3,0,1,2') throw new Error(`peer-lookup.js assumes layouts 8,0,1,3,4,3,0,1,2, not ${LAYOUT}`)

/**
 * Moves the coordinator's clock back by half its range when it is about to
 * overflow `H_CHOSEN` (after 2^31 marks): every entry's time keeps its order,
 * except that those marked over 2^30 lookups ago all count as never chosen.
 * @param {import('./engine.js').Engine} e
 */
export function rebaseClock (e) {
  const shift = 0x40000000
  e.holders.shiftChosen(shift)
  // a peer record's join time moves with the entries' times, so that each keeps its side of it
  const state = e.slots.state
  for (let s = 0; s < e.slots.capacity; s++) state[s * SLOT_STRIDE + SINCE] = Math.max(0, state[s * SLOT_STRIDE + SINCE] - shift)
  e.clock -= shift
}

/**
 * One lookup of `o` by `c`, as the coordinator answers it, by the shared
 * peer-selection rule (policy/peer-selection.js): its
 * `sampleStart` and `sampleNext` say which records of the object's holder list
 * to read, and each live holder read is offered to `e.ranking` (the rule's
 * `HolderRanking`) as it is read, without copying the sample or reading any
 * holder twice; then the first ranked holder's entry for `o` is marked chosen
 * (handlers/lookup.js: `store.markChosen`). Stale records met on the way
 * (sessions that ended) do not count toward the sample and leave the index
 * afterwards: the coordinator would already have dropped them. A record
 * [slot, tag, chosen] is live while the slot's `TAG` is its tag; its time
 * counts only if later than the holder's peer record's join (`SINCE`): a
 * page view's new peer record lists its holdings as never chosen.
 * @param {import('./engine.js').Engine} e
 * @param {number} c the asker's slot
 * @param {number} o
 * @param {number} size bytes wanted (for `accept`)
 * @returns {number} online holders sampled; the ranked ones (slots) are in `e.ranking`
 */
export function rankHolders (e, c, o, size) {
  e.size = size
  const mark = markChannels(e, c)
  const ranking = e.ranking
  ranking.reset(e.maxHolders, c)
  const lists = e.holders.lists
  const pool = lists.data(o)
  const state = e.slots.state
  const base = lists.base(o)
  const rank = rankKey
  const next = sampleNext
  const n = lists.length(o)
  const want = e.candidateSample
  let found = 0
  let read = 0
  let stale = 0
  /** the record of the best-ranked holder so far: the one marked */
  let first = 0
  // Fields by number (see LAYOUT above): V8 reloads and re-checks an imported
  // binding at every use, and this loop runs for every holder sampled.
  for (let pos = sampleStart(n, want, e.rng); pos !== -1;) {
    const rec = base + 3 * pos
    const p = pool[rec]
    const at = p << 3
    if (state[at] === pool[rec + 1]) {
      found++
      const connected = state[at + 1] === mark
      const chosen = pool[rec + 2]
      const key = rank(connected, chosen > state[at + 4] ? chosen : 0)
      if (ranking.wants(p, key) && accept(e, p, connected)) {
        ranking.insert(p, key)
        // first now only if it just entered first (a holder is listed once per object)
        if (ranking.ids[0] === p) first = rec
      }
    } else {
      if (stale === e.staleBuf.length) e.staleBuf = growTo(e.staleBuf, stale + 1)
      e.staleBuf[stale++] = pos
    }
    pos = next(pos, ++read, found, n, want)
  }
  // The mark, before the stale records go: dropping them moves records.
  if (ranking.size > 0) {
    if (e.clock === CLOCK_LIMIT) rebaseClock(e)
    pool[first + 2] = ++e.clock
  }
  if (stale === 0) return found
  // Drop stale records from the highest position down, so the record that
  // fills each hole (the list's last) is never one still to be dropped. The
  // positions were visited as one rising run, or two if the walk wrapped:
  // the second starts where a position is lower than the one before (found
  // here, among the few stale ones, not in the loop over every holder).
  const holders = e.holders
  const buf = e.staleBuf
  let wrapAt = 1
  while (wrapAt < stale && buf[wrapAt] > buf[wrapAt - 1]) wrapAt++
  for (let i = wrapAt - 1; i >= 0; i--) holders.removeAt(o, buf[i])
  for (let i = stale - 1; i >= wrapAt; i--) holders.removeAt(o, buf[i])
  return found
}

/**
 * The client tries the ranked holders (`rankHolders` has marked the first):
 * with page-lifetime channels, those its page has not seen fail, starting at
 * the page's turn (client/src/peer-fetch.js: a page's loads start at
 * successive holders). A holder it has an open channel to answers at once; one
 * whose channel an earlier load of the page is still setting up answers when
 * that set-up ends; any other needs a new connection, which fails when either
 * end is untraversable (or with `failRate`): the client reports it
 * (`no_channel`, at most once a page view: no-channel-reports.js) and, with
 * the hedge, moves on after `PASS_OVER_S`. With session-long channels (the
 * model before issue 22) it tries that holder again on later loads.
 *
 * With the hedge on, the origin is asked too once no peer byte has come by
 * the request's deadline (the client's hedge rule: client-timing.js
 * `requestDeadline`), at once when the asker's last new connections all
 * failed (`raceAt`: the client's reach.js); the first complete copy wins (a
 * tie goes to the origin).
 * A holder that would lose is asked nothing (`outrun`): the request goes to
 * the origin and the holder uploads nothing for it.
 * @param {import('./engine.js').Engine} e
 * @param {number} c the asker's slot
 * @param {number} size bytes of the asset
 * @param {import('../../../policy/hedge-rule.js').Priority} priority
 * @returns {number} the slot of the peer that served, or -1 (the origin)
 */
export function tryHolders (e, c, size, priority) {
  const ranking = e.ranking
  const n = ranking.size
  if (n === 0) return -1
  e.lookupHits++
  const channels = e.channels
  const state = e.slots.state
  /** @type {ArrayLike<number>} */
  let order = ranking.ids
  let count = n
  let start = 0
  if (e.pageChannels) {
    // the reply, less the peers that failed this page, from the page's turn on
    if (e.tryBuf.length < n) e.tryBuf = growTo(e.tryBuf, n)
    count = 0
    for (let i = 0; i < n; i++) {
      const p = order[i]
      if (!failedThisPage(e, c, p)) e.tryBuf[count++] = p
    }
    order = e.tryBuf
    start = count > 0 ? e.turn % count : 0
  }
  const t = e.now
  const hedged = e.hedged
  const asker = state[c * SLOT_STRIDE + CLIENT]
  const failedInRow = e.failedInRow
  const deadline = hedged ? raceAt(requestDeadline(e.config, size, priority), failedInRow[asker]) : Infinity
  let tau = e.lookupTime
  for (let k = 0; k < count; k++) {
    const p = order[(start + k) % count]
    const page = state[p * SLOT_STRIDE + PAGE]
    let firstByte
    if (connected(e, p)) {
      e.reused++
      firstByte = tau
    } else {
      const at = channels.find(c, p)
      const ready = at !== -1 && channels.lists.pool[at + 1] === page ? channels.readyAt(at) : NaN
      if (ready === Infinity) continue // failed earlier this page (and in the loop above, so only as a guard)
      if (!Number.isNaN(ready)) { // a set-up under way: wait for it
        e.setupsShared++
        firstByte = Math.max(tau, ready - t)
      } else {
        e.attempts++
        if (connectionFails(e, c, p)) {
          e.failures++
          failedInRow[asker]++
          reportNoChannel(e, c, p) // may renumber ids, which moves records: found again below
          if (e.pageChannels) channels.open(c, p, state[p * SLOT_STRIDE + PAGE], Infinity)
          if (hedged) tau += e.passOver
          continue
        }
        channels.open(c, p, page, hedged ? t + tau + e.setupTime : t, at)
        // a channel opens: at both ends, the count of failed ones starts again
        failedInRow[asker] = 0
        failedInRow[state[p * SLOT_STRIDE + CLIENT]] = 0
        firstByte = tau + e.setupTime
      }
    }
    if (!hedged || firstByte <= deadline) return p
    // the race: the origin asked at the deadline; a holder that would lose it is not asked (outrun)
    if (!outrun(firstByte + size / e.peerRate, deadline, e.originTtfb + size / e.originRate)) return p
    e.racesLost++
    return -1
  }
  return -1
}

/**
 * Whether a new connection from the asker in slot `c` to the holder in slot
 * `p` fails: either end untraversable, or (with the hedge) a set-up longer
 * than the client waits, or else a draw under `failRate`.
 * @param {import('./engine.js').Engine} e
 * @param {number} c
 * @param {number} p
 * @returns {boolean}
 */
function connectionFails (e, c, p) {
  const state = e.slots.state
  const traits = e.traits
  if (((traits[state[c * SLOT_STRIDE + CLIENT]] | traits[state[p * SLOT_STRIDE + CLIENT]]) & UNTRAVERSABLE) !== 0) return true
  if (e.hedged && e.setupTime > e.passOver) return true
  return e.failRate > 0 && e.rng.random() < e.failRate
}

/**
 * @param {import('./engine.js').Engine} e
 * @param {number} c the asker's slot
 * @param {number} p a holder's slot
 * @returns {boolean} whether a connection from `c`'s page to `p`'s current peer record failed
 */
function failedThisPage (e, c, p) {
  const at = e.channels.find(c, p)
  return at !== -1 && e.channels.lists.pool[at + 1] === e.slots.state[p * SLOT_STRIDE + PAGE] && e.channels.readyAt(at) === Infinity
}

/**
 * Marks the peer records `c` has open channels to with this lookup's number, in
 * the slot the lookup reads of every candidate anyway: checking a candidate is
 * then one comparison, not a scan of `c`'s channels per candidate. A channel
 * still being set up (or one that failed) is not open: the client's
 * `connected` list (peer-pool.js) names open channels only.
 * @param {import('./engine.js').Engine} e
 * @param {number} c the asker's slot
 * @returns {number} this lookup's mark
 */
function markChannels (e, c) {
  // int32 marks wrap around; a mark 2^32 lookups old is long overwritten
  const mark = e.markSeq = (e.markSeq + 1) | 0
  const channels = e.channels
  const lists = channels.lists
  const n = lists.length(c)
  if (n === 0) return mark
  const pool = lists.pool
  const base = lists.base(c)
  const state = e.slots.state
  const ready = channels.readyView()
  const now = e.now
  for (let i = 0; i < n; i++) {
    const rec = base + i * 4
    const at = pool[rec] << 3 // slot fields by number: see LAYOUT
    // the float64 `ready at` of a record is its fields 2–3 (channels.js)
    if (state[at] !== 0 && state[at + 3] === pool[rec + 1] && ready[(rec >> 1) + 1] <= now) state[at + 1] = mark
  }
  return mark
}

/**
 * Whether the asker of the lookup in progress has an open data channel to the
 * peer record in slot `p`: one its current peer record opened (older ones were
 * closed) to that peer record. Reads the marks `markChannels` left.
 * @param {import('./engine.js').Engine} e
 * @param {number} p a slot
 * @returns {boolean}
 */
export function connected (e, p) {
  return e.slots.state[p * SLOT_STRIDE + MARK] === e.markSeq
}

/**
 * The policy's `accept`, asked only about live holders: the holder stays
 * online through a connection set-up, if a new channel is needed, and is
 * under its upload cap.
 * @param {import('./engine.js').Engine} e
 * @param {number} p a live holder's slot
 * @param {boolean} connected whether the asker has a channel to it (`connected(e, p)`)
 * @returns {boolean}
 */
export function accept (e, p, connected) {
  const t = e.now
  if (e.setupTime > 0 && !connected && e.slots.until[p] < t + e.setupTime) {
    e.setupRefusals++
    return false
  }
  if (e.capped) {
    const q = e.slots.state[p * SLOT_STRIDE + CLIENT]
    const tok = Math.min(e.uploadBurst, e.tokens[q] + (t - e.tokenAt[q]) * e.uploadRate)
    e.tokens[q] = tok
    e.tokenAt[q] = t
    if (tok < e.size) return false
  }
  return true
}
