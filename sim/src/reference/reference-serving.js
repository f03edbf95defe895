/**
 * What a client serves in the reference model (reference-model.js), plainly:
 * whether it may serve, listing and unlisting, the upload a serve spends
 * (and the budgets it may exhaust), and the `no_channel` reports askers send
 * about it, at most one a page view, with the coordinator's judgement of them
 * (quarantine). What serving.js and no-channel-reports.js do over the
 * engine's typed arrays, restated; functions of the model's state.
 */
import { blames } from '../../../policy/report-rule.js'
import { getOr } from './reference-state.js'
import { unreached } from '../../../policy/hedge-rule.js'

/** @typedef {import('./reference-model.js').ReferenceModel} ReferenceModel */
/** @typedef {import('./reference-state.js').Session} Session */

/** @param {ReferenceModel} m @param {Session} session @returns {boolean} whether it may serve now: not receive-only, quarantined, over a budget or unreached */
export function serves (m, session) {
  const c = session.client
  const { uploadSession, uploadDay } = m.config
  if (m.traitsOf(c).receiveOnly || m.now < (m.quarantinedUntil.get(c) ?? 0) || session.uploaded >= uploadSession || unreached(m.failedInRow.get(c) ?? 0)) return false
  const today = m.today.get(c)
  return (today !== undefined && today.day === Math.floor(m.now / 86400) ? today.bytes : 0) < uploadDay
}

/** @param {ReferenceModel} m @param {Session} session starts serving: the coordinator lists its store (storage order), never chosen */
export function list (m, session) {
  const listing = session.listing = { session, live: true }
  for (const { object } of m.storeOf(session.client).entries) m.listOf(object).push({ listing, chosen: 0 })
}

/** @param {Session} session stops serving: unlisted at once (its entries go stale) */
export function unlist (session) {
  /** @type {import('./reference-state.js').Listing} */ (session.listing).live = false
  session.listing = null
}

/**
 * The holder served `size` bytes: its upload, token bucket and budgets (past one it stops serving).
 * @param {ReferenceModel} m @param {Session} holder @param {number} size
 */
export function servedBy (m, holder, size) {
  holder.uploaded += size
  if (m.config.uploadRate !== Infinity) m.bucket(holder.client).tokens -= size
  const day = Math.floor(m.now / 86400)
  const today = getOr(m.today, holder.client, () => ({ day, bytes: 0 }))
  if (today.day !== day) Object.assign(today, { day, bytes: 0 })
  today.bytes += size
  if (holder.listing === null) return
  if (holder.uploaded >= m.config.uploadSession) m.n.sessionBudgetStops++
  else if (today.bytes >= m.config.uploadDay) m.n.dayBudgetStops++
  else return
  unlist(holder)
}

/**
 * A `no_channel` report, unless the asker's page view has reported this peer record already
 * (the client's `reported`, client/src/peer-fetch.js), judged as the coordinator's quarantine.js judges it.
 * @param {ReferenceModel} m @param {Session} asker @param {Session} holder
 */
export function reportNoChannel (m, asker, holder) {
  if (asker.reported.has(holder.page)) return
  asker.reported.add(holder.page)
  m.n.reportsSent++
  if (!(m.config.reportRule === 'all' || blames('no_channel'))) return
  const subject = holder.client
  if (m.now < (m.quarantinedUntil.get(subject) ?? 0) || asker.client === subject || holder.listing === null) return
  m.n.reportsCounted++
  const reporters = getOr(m.reports, subject, () => new Map())
  reporters.set(asker.client, m.now)
  for (const [who, when] of reporters) if (when <= m.now - m.config.reportWindow) reporters.delete(who)
  if (reporters.size < m.config.reportThreshold) return
  m.reports.delete(subject)
  if (!m.quarantinedUntil.has(subject)) m.n.quarantinedClients++
  m.quarantinedUntil.set(subject, m.now + m.config.quarantine)
  m.n.quarantines++
  unlist(holder)
}
