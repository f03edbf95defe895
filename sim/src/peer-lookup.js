/**
 * The coordinator's side of a lookup, and the client's tries, as the engine
 * models them: the shared peer-selection rule's sample, ranking and mark
 * (`sampleStart`, `sampleNext`, `HolderRanking`, `rankKey`, imported from
 * the coordinator, not reimplemented) over the engine's typed arrays, and the
 * requester trying the returned holders in order. Functions of the engine's state, kept apart
 * from the engine's bookkeeping.
 *
 * Random draws, in this order per lookup (sim/src/reference-model.js takes
 * the same ones, which is what lets it agree with the engine exactly): the
 * sample's start, only when the holder list (stale records included) is
 * longer than `candidateSample`; then one per new connection tried, only when
 * `failRate` > 0.
 */
import { rankKey, sampleNext, sampleStart } from '../../coordinator/src/policy/peer-selection.js'
import { growTo } from './batch.js'
import { H_CHOSEN, H_SLOT, H_STRIDE, H_TAG } from './holder-index.js'
import { CLIENT, MARK, SLOT_STRIDE, TAG } from './online-slots.js'

/** the largest `H_CHOSEN` an int32 holds */
const CLOCK_LIMIT = 0x7fffffff

// The loops below address fields by number, as `state[(slot << 2) + 1]` for
// a slot's MARK and `pool[rec + 2]` for a holder record's H_CHOSEN: checked
// here against the layouts they assume.
const LAYOUT = [SLOT_STRIDE, TAG, MARK, H_STRIDE, H_SLOT, H_TAG, H_CHOSEN]
if (LAYOUT.join() !== '4,0,1,3,0,1,2') throw new Error(`peer-lookup.js assumes layouts 4,0,1,3,0,1,2, not ${LAYOUT}`)

/**
 * Moves the coordinator's clock back by half its range when it is about to
 * overflow `H_CHOSEN` (after 2^31 marks): every entry's time keeps its order,
 * except that those marked over 2^30 lookups ago all count as never chosen.
 * @param {import('./engine.js').Engine} e
 */
export function rebaseClock (e) {
  const shift = 0x40000000
  e.holders.shiftChosen(shift)
  e.clock -= shift
}

/**
 * One lookup of `o` by `c`, as the coordinator answers it, by the shared
 * peer-selection rule (coordinator/src/policy/peer-selection.js): its
 * `sampleStart` and `sampleNext` say which records of the object's holder list
 * to read, and each live holder read is offered to `e.ranking` (the rule's
 * `HolderRanking`) as it is read, without copying the sample or reading any
 * holder twice; then the first ranked holder's entry for `o` is marked chosen
 * (handlers/lookup.js: `store.markChosen`). Stale records met on the way
 * (sessions that ended) do not count toward the sample and leave the index
 * afterwards: the coordinator would already have dropped them. A record
 * [slot, tag, chosen] is live while the slot's `TAG` is its tag.
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
    const at = p << 2
    if (state[at] === pool[rec + 1]) {
      found++
      const connected = state[at + 1] === mark
      const key = rank(connected, pool[rec + 2])
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
 * The client tries the ranked holders in order (`rankHolders` has marked the first).
 * @param {import('./engine.js').Engine} e
 * @param {number} c the asker's slot
 * @returns {number} the slot of the peer that served, or -1
 */
export function tryHolders (e, c) {
  const ranking = e.ranking
  const n = ranking.size
  if (n === 0) return -1
  const chosen = ranking.ids
  e.lookupHits++
  for (let i = 0; i < n; i++) {
    const p = chosen[i]
    if (connected(e, p)) {
      e.reused++
      return p
    }
    e.attempts++
    if (e.failRate > 0 && e.rng.random() < e.failRate) {
      e.failures++
      continue
    }
    e.channels.open(c, p, e.slots.state[p * SLOT_STRIDE + TAG])
    return p
  }
  return -1
}

/**
 * Marks the sessions `c` has live channels to with this lookup's number, in
 * the slot the lookup reads of every candidate anyway: checking a candidate is
 * then one comparison, not a scan of `c`'s channels per candidate.
 * @param {import('./engine.js').Engine} e
 * @param {number} c the asker's slot
 * @returns {number} this lookup's mark
 */
function markChannels (e, c) {
  // int32 marks wrap around; a mark 2^32 lookups old is long overwritten
  const mark = e.markSeq = (e.markSeq + 1) | 0
  const lists = e.channels.lists
  const n = lists.length(c)
  if (n === 0) return mark
  const pool = lists.pool
  const base = lists.base(c)
  const state = e.slots.state
  for (let i = 0; i < n; i++) {
    const at = pool[base + i * 2] << 2 // slot fields by number: see LAYOUT
    if (state[at] === pool[base + i * 2 + 1]) state[at + 1] = mark
  }
  return mark
}

/**
 * Whether the asker of the lookup in progress has a live data channel to the
 * session in slot `p`: one it opened in its current session (older ones were
 * closed) to that session. Reads the marks `markChannels` left.
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
