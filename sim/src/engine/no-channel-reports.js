/**
 * The `no_channel` reports askers send about holders whose new connection
 * never opened, as the engine keeps them: the asker's side, a page view
 * reports a peer at most once (client/src/peer-fetch.js: a PeerFetch lives
 * as long as its page and keeps the peers it `reported`), and the
 * coordinator's side, its quarantine.js judgement of the reports that count
 * (the tally: report-tally.js).
 */
import { CLIENT, LISTED, PAGE, SLOT_STRIDE } from './online-slots.js'
import { QUARANTINED_ONCE, unlist } from './serving.js'
import { SlabLists } from './slab-lists.js'

/**
 * The peers each session's current page view has reported: per asker slot,
 * [peer's slot, peer's page id] records, a peer named by its peer record as
 * the client names it by its peer id (a holder's next page view is a new
 * peer). Emptied as each page view begins.
 */
export class ReportedPeers {
  constructor () {
    // a page reports few peers: room for two in the slot's own record
    this.lists = new SlabLists(2, 2)
  }

  /** @param {number} n owners (slots) to make room for */
  ensureOwners (n) {
    this.lists.ensureOwners(n)
  }

  /**
   * The page view of the session in slot `c` ended: it has reported nobody.
   * @param {number} c
   */
  forget (c) {
    this.lists.clear(c)
  }

  /**
   * Notes that `c`'s page view reports peer record `page` of slot `p`.
   * @param {number} c
   * @param {number} p
   * @param {number} page
   * @returns {boolean} false if the page view had already reported it
   */
  add (c, p, page) {
    const lists = this.lists
    const data = lists.data(c)
    const base = lists.base(c)
    for (let i = 0, n = lists.length(c); i < n; i++) {
      if (data[base + 2 * i] === p && data[base + 2 * i + 1] === page) return false
    }
    lists.push(c, p, page)
    return true
  }
}

/**
 * The asker in slot `c` could not open a new connection to the holder in
 * slot `p`: it reports that (`no_channel`), unless its page view has
 * reported that peer already, and the coordinator judges the report as its
 * quarantine.js does: under a rule that counts the reason, distinct reporters
 * within `reportWindow` quarantine the holder's visitor for `quarantine`
 * seconds, which unlists it at once.
 * @param {import('./engine.js').Engine} e
 * @param {number} c
 * @param {number} p
 */
export function reportNoChannel (e, c, p) {
  const state = e.slots.state
  if (!e.reported.add(c, p, state[p * SLOT_STRIDE + PAGE])) return
  e.reportsSent++
  if (!e.reportsCount) return
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
