/**
 * The coordinator's tally of reports that count toward quarantine, as its
 * memory store keeps it (coordinator/src/store/memory-store.js `report`): per
 * reported visitor, each reporter's latest report; a report counts the
 * distinct reporters whose latest report is within the window. Used only
 * under a rule that counts what the simulated clients report (`no_channel`),
 * so a run under the coordinator's rule allocates nothing here.
 */

export class ReportTally {
  constructor () {
    /** @type {Map<number, Map<number, number>>} subject → reporter → when it last reported */
    this.bySubject = new Map()
  }

  /**
   * Records a report and says how many distinct reporters now count.
   * @param {number} subject the reported client
   * @param {number} reporter the reporting client
   * @param {number} at seconds
   * @param {number} window seconds reports count for
   * @returns {number}
   */
  report (subject, reporter, at, window) {
    let reporters = this.bySubject.get(subject)
    if (reporters === undefined) this.bySubject.set(subject, (reporters = new Map()))
    reporters.set(reporter, at)
    for (const [who, when] of reporters) if (when <= at - window) reporters.delete(who)
    return reporters.size
  }

  /**
   * Drops a subject's reports (it was quarantined).
   * @param {number} subject
   */
  forget (subject) {
    this.bySubject.delete(subject)
  }
}
