/**
 * Which reports count toward quarantine, and how many of them quarantine a
 * visitor for how long: one rule, shared by the coordinator
 * (coordinator/src/quarantine.js) and the simulator (`sim/`), defaults
 * included (REPORT_DEFAULTS), so that the simulator's quarantine is the one
 * that runs.
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
/** @typedef {(typeof import('../protocol/index.js').REPORT_REASONS)[number]} ReportReason */

/**
 * The defaults of the coordinator's options for this rule (coordinator/src/config.js
 * takes them from here, and says what each means): distinct visitors whose
 * blaming reports within the window quarantine a visitor, and for how long.
 */
const reportDefaults = {
  reportThreshold: 3,
  reportWindowMs: 600_000,
  quarantineMs: 86_400_000
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
export const REPORT_DEFAULTS = Object.freeze(reportDefaults)

/** Reasons that blame the reported peer: these count toward its quarantine. */
export const BLAMING_REASONS = Object.freeze(/** @type {ReportReason[]} */ (['hash_mismatch', 'miss']))

/**
 * @param {string} reason a REPORT_REASONS value
 * @returns {boolean} whether a report with this reason counts toward quarantining the reported peer
 */
export function blames (reason) {
  return BLAMING_REASONS.includes(/** @type {ReportReason} */ (reason))
}
