/**
 * Lying peers: receivers `report` a peer that sent bytes failing SHA-256,
 * said `miss` for an asset it announced, never opened a channel or stalled.
 * Only reports that blame the peer count toward quarantine (bad bytes, a
 * false miss: policy/report-rule.js); a channel that never opened or stalled
 * may be the reporter's network's fault, so those are only counted in the
 * metrics. A report counts only about a peer a lookup introduced to
 * the reporter (the handler checks), once per reporting visitor; when
 * `reportThreshold` distinct visitors have reported one within
 * `reportWindowMs`, that visitor is quarantined for `quarantineMs`: its
 * holdings leave the store at once, so no lookup hands it out, and its
 * announcements are ignored, on this connection and on any later one.
 *
 * Reports and quarantine are about visitors, not peer ids (which change with
 * every join): the subject is a hash of the visitor its join token names, else
 * of the key its browser keeps (`join`'s `visitor`), else of its peer id; who
 * reported is counted as {@link Quarantine#reporterOf} says. The
 * tally lives in the store, so it survives the visitor moving to another shard.
 * A report is judged where the reported peer's socket is (its shard, over the
 * bus when that is another), the one place that knows who the peer is.
 */
import { createHash } from 'node:crypto'
import { REPORT_REASONS, shardOfPeer } from '../../protocol/index.js'
import { isAssetName, isPeerId } from './fields.js'
import { blames } from '../../policy/report-rule.js'

/**
 * @param {string} kind 'visitor' (the token's), 'key' (the browser's) or 'peer'
 * @param {string} name
 * @returns {string} a short, stable name for the store that does not reveal `name`
 */
export function subjectOf (kind, name) {
  return createHash('sha256').update(`maygh:${kind}:${name}`).digest('base64url').slice(0, 22)
}

export class Quarantine {
  /**
   * @param {object} deps
   * @param {import('./store/store.js').Store} deps.store
   * @param {Readonly<import('./config.js').Config>} deps.config
   * @param {string} deps.shard this coordinator's shard id
   * @param {Map<string, import('./session.js').Session>} deps.sessions joined peers on this shard
   * @param {import('./metrics.js').Metrics} deps.metrics
   * @param {(err: Error, context: string) => void} deps.warn
   * @param {(session: import('./session.js').Session) => Promise<void>} deps.unlist takes a peer's holdings out of the store (in its session's order)
   * @param {import('./networks.js').Networks} deps.networks names reporters' networks
   */
  constructor ({ store, config, shard, sessions, metrics, warn, unlist, networks }) {
    this.store = store
    this.config = config
    this.shard = shard
    this.sessions = sessions
    this.metrics = metrics
    this.warn = warn
    this.unlist = unlist
    this.networks = networks
  }

  /**
   * Who a report counts as coming from. Where the site issues tokens, the
   * visitor its token names (the site decides how many a person gets); without
   * them, the reporter's network (a keyed hash of its /24 or /48): a visitor can
   * make new peer ids and browser keys at will, but not new networks, so one
   * visitor counts once however many identities it makes. (So do several
   * visitors behind one NAT.)
   * @param {import('./session.js').Session} session
   * @returns {Promise<string>}
   */
  async reporterOf (session) {
    if (this.config.tokenSecrets !== null && session.visitor !== '') return session.subject
    return this.networks.name(session.ip)
  }

  /**
   * A reporter (its subject) says `peer` failed it: judged here when the
   * peer is on this shard, else on the peer's shard.
   * @param {string} peer
   * @param {string} reporter the reporting visitor's subject
   * @param {string} reason one of REPORT_REASONS
   * @param {string} hash the asset it failed on
   * @returns {Promise<void>}
   */
  async accuse (peer, reporter, reason, hash) {
    this.metrics.countReport(reason)
    if (!blames(reason)) return
    const shard = shardOfPeer(peer)
    if (shard === this.shard) return this.judge(peer, reporter, reason, hash)
    await this.store.publish(shard, { report: peer, by: reporter, reason, hash })
  }

  /**
   * A report from another shard, off the bus: checked as a client's frame is, never throws.
   * @param {{ report?: unknown, by?: unknown, reason?: unknown, hash?: unknown }} message
   * @returns {boolean} whether it was a well-formed report
   */
  receive (message) {
    const { report, by, reason, hash } = message
    if (!isPeerId(report) || typeof by !== 'string' || by.length > 64 || !REPORT_REASONS.includes(/** @type {any} */ (reason)) || !isAssetName(hash)) return false
    this.judge(report, by, /** @type {string} */ (reason), hash).catch((err) => this.warn(err, `judging a report of ${report} failed`))
    return true
  }

  /**
   * Count the report against the peer's visitor, if it blames the peer;
   * quarantine it at the threshold. A peer that has withdrawn (not serving, or no longer listing
   * the asset it said `miss` for) is not lying by refusing: it was handed out
   * before it said so, and no lookup names it now. Bad bytes always count.
   * @param {string} peer on this shard
   * @param {string} reporter
   * @param {string} reason
   * @param {string} hash
   */
  async judge (peer, reporter, reason, hash) {
    const session = this.sessions.get(peer)
    if (!blames(reason) || session === undefined || session.quarantined || reporter === session.subject) return
    if (reason !== 'hash_mismatch' && (!session.serving || (reason === 'miss' && !session.assets.has(hash)))) return
    const reporters = await this.store.report(session.subject, reporter, Date.now(), this.config.reportWindowMs)
    if (reporters < this.config.reportThreshold) return
    await this.store.quarantine(session.subject, this.config.quarantineMs)
    await this.isolate(session)
  }

  /**
   * Stop handing a peer out: its holdings leave the store, and what it
   * announces from now on is acknowledged but not listed.
   * @param {import('./session.js').Session} session
   */
  async isolate (session) {
    if (session.quarantined) return
    session.quarantined = true
    this.metrics.countQuarantine()
    await this.unlist(session)
  }
}
