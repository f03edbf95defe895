/**
 * A client's sessions and page views, as the engine keeps them (the sessions
 * themselves are found by session-window.js): a session joins the
 * coordinator (a slot, a peer record, its holdings listed if it serves), each
 * page view begins (with page-lifetime channels a new page script: a new peer
 * record and a new `join`), and a session ends once its online time is over.
 * Functions of the engine's state, as serving.js and peer-lookup.js are.
 */
import { list, serves, unlist } from './serving.js'
import { ASSETS, LISTED, SLOT_STRIDE } from './online-slots.js'

/** `Engine#pageState`: no page view yet, in the first page view ever, past it */
export const NO_VIEW = 0
export const FIRST_VIEW = 1
export const LATER_VIEW = 2

/**
 * A session starts: the client joins with its holdings. It takes a slot (a
 * new peer record: no channels), and, if it serves, the index lists its
 * holdings under the session's tag as new entries, never chosen (records
 * of its earlier sessions are stale).
 * @param {import('./engine.js').Engine} e
 * @param {number} c
 * @param {number} t
 * @param {number} h hour index
 * @returns {number} its slot
 */
export function join (e, c, t, h) {
  const slots = e.slots
  if (slots.tagsExhausted()) e.renumber()
  const s = slots.open(c, e.clock)
  if (s >= e.channels.lists.ownerCap) e.channels.ensureOwners(slots.capacity)
  if (s >= e.reported.lists.ownerCap) e.reported.ensureOwners(slots.capacity)
  e.channels.reset(s)
  e.slotOf[c] = s
  if (serves(e, c, s, t)) list(e, c, s)
  else slots.state[s * SLOT_STRIDE + LISTED] = 0
  countJoin(e, c, s, t, h)
  e.online++
  e.meters.noteOnline(e.online)
  return s
}

/**
 * A page view begins: the page's memory of the peers it reported starts
 * empty (the client's PeerFetch lives as long as the page). With
 * page-lifetime channels, a page view after the session's first is a new
 * page script: a new peer record (joined now: its holdings list as never
 * chosen, no channels, no peers failed yet) and a new `join`, which says
 * again whether the client serves.
 * @param {import('./engine.js').Engine} e
 * @param {number} c
 * @param {number} s its slot
 * @param {number} t
 * @param {number} h
 * @param {boolean} joined whether the session has just joined (that join was this page's)
 */
export function startPage (e, c, s, t, h, joined) {
  e.pageViews++
  e.pageState[c] = e.pageState[c] === NO_VIEW ? FIRST_VIEW : LATER_VIEW
  e.reported.forget(s)
  e.slots.state[s * SLOT_STRIDE + ASSETS] = 0
  if (joined || !e.pageChannels) return
  const slots = e.slots
  if (slots.tagsExhausted()) e.renumber()
  slots.newPage(s, e.clock)
  e.channels.reset(s)
  const listed = slots.state[s * SLOT_STRIDE + LISTED] === 1
  const may = serves(e, c, s, t)
  if (may && !listed) list(e, c, s)
  else if (!may && listed) unlist(e, s)
  countJoin(e, c, s, t, h)
}

/**
 * A `join` reaches the coordinator: counted, with the holdings it lists.
 * @param {import('./engine.js').Engine} e
 * @param {number} c
 * @param {number} s
 * @param {number} t
 * @param {number} h
 */
export function countJoin (e, c, s, t, h) {
  if (e.slots.state[s * SLOT_STRIDE + LISTED] === 1) e.joinHave += e.stores.count(c)
  e.meters.joins.add(t)
  e.meters.series.joins[h]++
}

/**
 * A session ends. The coordinator drops the client's holdings; the index
 * here drops them lazily (peer-lookup.js `rankHolders`), so only the slot is
 * given back.
 * @param {import('./engine.js').Engine} e
 * @param {number} c
 */
export function leave (e, c) {
  const s = e.slotOf[c]
  e.uploaded[c] += e.slots.uploaded[s]
  e.slots.close(s)
  e.slotOf[c] = -1
  e.online--
}

/**
 * Ends the sessions of clients whose online time is over before `t`.
 * @param {import('./engine.js').Engine} e
 * @param {number} t
 */
export function expire (e, t) {
  const q = e.expiries
  while (!q.empty()) {
    const until = q.peekTime()
    if (until >= t) break
    const c = q.shift()
    // a later request may have extended the client's time; then this entry is stale
    const s = e.slotOf[c]
    if (s !== -1 && e.slots.until[s] === until) leave(e, c)
  }
}
