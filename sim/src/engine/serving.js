/**
 * What a client serves, as the engine keeps it: whether it may serve (its
 * traits, a quarantine, its budgets), listing and unlisting a session's
 * holdings, and the upload a serve spends (and the budgets it may exhaust).
 * Functions of the engine's state, kept apart from its bookkeeping, as
 * peer-lookup.js is. (Page views' joins: sessions.js; reports and
 * quarantine: no-channel-reports.js.)
 */
import { unreached } from '../../../policy/hedge-rule.js'
import { CLIENT, LISTED, SLOT_STRIDE, TAG } from './online-slots.js'

/** bit of `Engine#traits`: the client is behind a NAT no peer connection traverses */
export const UNTRAVERSABLE = 1
/** bit of `Engine#traits`: the client fetches from peers but never serves */
export const RECEIVE_ONLY = 2
/** bit of `Engine#traits`: the client has been quarantined at least once */
export const QUARANTINED_ONCE = 4

/**
 * Whether the client may serve now: not receive-only, not quarantined, its
 * upload budgets not spent (client/src/uplink.js), and not unreached: its
 * last new connections all failed (client/src/reach.js; asked as a page
 * joins, as the client's page does).
 * @param {import('./engine.js').Engine} e
 * @param {number} c
 * @param {number} s its slot
 * @param {number} t
 * @returns {boolean}
 */
export function serves (e, c, s, t) {
  if ((e.traits[c] & RECEIVE_ONLY) !== 0 || t < e.quarantinedUntil[c] || unreached(e.failedInRow[c])) return false
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
