/**
 * Which reports count toward quarantine: one rule, shared by the coordinator
 * (quarantine.js) and the simulator (`sim/`), so that the simulator's
 * quarantine is the one that runs.
 *
 * A report counts only when it says whose fault it was. Bad bytes
 * (`hash_mismatch`: the receiver checked them against their SHA-256 name) are
 * the sender's; so is `miss` for an asset the sender still lists (the
 * coordinator checks that it does). A channel that never opened
 * (`no_channel`) or went quiet (`stall`) is not: the receiver's own network
 * (a NAT that cannot be traversed, a lossy link) fails it with every peer it
 * tries, and counting those reports quarantined good visitors for other
 * people's networks. They are still counted in the metrics, and the receiver
 * still passes that peer over for the rest of its page.
 */
/** @typedef {(typeof import('../../../protocol/index.js').REPORT_REASONS)[number]} ReportReason */

/** Reasons that blame the reported peer: these count toward its quarantine. */
export const BLAMING_REASONS = Object.freeze(/** @type {ReportReason[]} */ (['hash_mismatch', 'miss']))

/**
 * @param {string} reason a REPORT_REASONS value
 * @returns {boolean} whether a report with this reason counts toward quarantining the reported peer
 */
export function blames (reason) {
  return BLAMING_REASONS.includes(/** @type {ReportReason} */ (reason))
}
