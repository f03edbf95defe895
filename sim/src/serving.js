/**
 * What a client serves, as the engine keeps it: the peer records a page view
 * starts (a new `join`, which says again whether the client serves), listing
 * and unlisting a session's holdings, the upload a serve spends (and the
 * budgets it may exhaust), and the `no_channel` reports askers send with the
 * coordinator's judgement of them (quarantine). Functions of the engine's
 * state, kept apart from its bookkeeping, as peer-lookup.js is.
 */
import { CLIENT, LISTED, SLOT_STRIDE, TAG } from './online-slots.js'

/** bit of `Engine#traits`: the client is behind a NAT no peer connection traverses */
export const UNTRAVERSABLE = 1
/** bit of `Engine#traits`: the client fetches from peers but never serves */
export const RECEIVE_ONLY = 2
/** bit of `Engine#traits`: the client has been quarantined at least once */
export const QUARANTINED_ONCE = 4

/** `Engine#pageState`: no page view yet, in the first page view ever, past it */
export const NO_VIEW = 0
export const FIRST_VIEW = 1
export const LATER_VIEW = 2

/**
 * A page view begins. With page-lifetime channels, a page view after the
 * session's first is a new page script: a new peer record (joined now: its
 * holdings list as never chosen, no channels, no peers failed yet) and a
 * new `join`, which says again whether the client serves.
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
 * Whether the client may serve now: not receive-only, not quarantined, its
 * upload budgets not spent (client/src/uplink.js).
 * @param {import('./engine.js').Engine} e
 * @param {number} c
 * @param {number} s its slot
 * @param {number} t
 * @returns {boolean}
 */
export function serves (e, c, s, t) {
  if ((e.traits[c] & RECEIVE_ONLY) !== 0 || t < e.quarantinedUntil[c]) return false
  if (e.slots.uploaded[s] >= e.uploadSession) return false
  if (e.uploadDay === Infinity) return true
  return (e.uploadDayOf[c] === Math.floor(t / 86400) ? e.uploadedToday[c] : 0) < e.uploadDay
}

/**
 * The session starts listing its holdings (under its current tag, which lists nothing yet).
 * @param {import('./engine.js').Engine} e
 * @param {number} c
 * @param {number} s
 */
export function list (e, c, s) {
  const slots = e.slots
  slots.state[s * SLOT_STRIDE + LISTED] = 1
  const tag = slots.state[s * SLOT_STRIDE + TAG]
  const stores = e.stores
  const holders = e.holders
  const n = stores.count(c)
  // Read every object's record first, in a loop short enough that the
  // processor has all those cache misses in flight at once; the adds then hit.
  let touched = 0
  for (let i = 0; i < n; i++) touched += holders.count(stores.objectAt(c, i))
  e.prefetchSink += touched
  for (let i = 0; i < n; i++) holders.add(stores.objectAt(c, i), s, tag)
}

/**
 * The session stops serving: the coordinator unlists it at once (a new tag
 * makes its records stale) and lists nothing it announces.
 * @param {import('./engine.js').Engine} e
 * @param {number} s
 */
export function unlist (e, s) {
  const slots = e.slots
  if (slots.tagsExhausted()) e.renumber()
  slots.state[s * SLOT_STRIDE + LISTED] = 0
  slots.retag(s)
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
  e.joins.add(t)
  e.hs.joins[h]++
}

/**
 * The session in slot `p` served `size` bytes: its upload, its token
 * bucket, its budgets (past one it stops serving at once).
 * @param {import('./engine.js').Engine} e
 * @param {number} p
 * @param {number} size
 * @param {number} t
 */
export function served (e, p, size, t) {
  const slots = e.slots
  // counted in the dense slot table; added to the client's total when its session ends
  const session = slots.uploaded[p] += size
  const q = slots.state[p * SLOT_STRIDE + CLIENT]
  if (e.capped) e.tokens[q] -= size
  let day = 0
  if (e.uploadDay !== Infinity) {
    const today = Math.floor(t / 86400)
    if (e.uploadDayOf[q] !== today) {
      e.uploadDayOf[q] = today
      e.uploadedToday[q] = 0
    }
    day = e.uploadedToday[q] += size
  }
  if (slots.state[p * SLOT_STRIDE + LISTED] === 0) return
  if (session >= e.uploadSession) e.sessionBudgetStops++
  else if (day >= e.uploadDay) e.dayBudgetStops++
  else return
  unlist(e, p)
}

/**
 * The asker in slot `c` reports that a new connection to the holder in slot
 * `p` never opened (`no_channel`), and the coordinator judges it as its
 * quarantine.js does: under a rule that counts the reason, distinct
 * reporters within `reportWindow` quarantine the holder's visitor for
 * `quarantine` seconds, which unlists it at once.
 * @param {import('./engine.js').Engine} e
 * @param {number} c
 * @param {number} p
 */
export function reportNoChannel (e, c, p) {
  e.reportsSent++
  if (!e.reportsCount) return
  const state = e.slots.state
  const reporter = state[c * SLOT_STRIDE + CLIENT]
  const subject = state[p * SLOT_STRIDE + CLIENT]
  const t = e.now
  if (t < e.quarantinedUntil[subject] || reporter === subject || state[p * SLOT_STRIDE + LISTED] === 0) return
  e.reportsCounted++
  if (e.reports.report(subject, reporter, t, e.reportWindow) < e.reportThreshold) return
  e.reports.forget(subject)
  e.quarantinedUntil[subject] = t + e.quarantine
  e.quarantines++
  if ((e.traits[subject] & QUARANTINED_ONCE) === 0) {
    e.traits[subject] |= QUARANTINED_ONCE
    e.quarantinedClients++
  }
  unlist(e, p)
}
