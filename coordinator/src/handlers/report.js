/**
 * `report`: a peer says one it was introduced to failed it (bad bytes, a false
 * `miss`, no channel, a stall). Counted only about a peer a lookup of the
 * reporter's handed out, and not from a quarantined reporter; judged where the
 * reported peer is (quarantine.js).
 */
import { ERRORS, MayghError, REPORT_REASONS } from '../../../protocol/index.js'
import { badField, isAssetName, isPeerId } from '../fields.js'

/** Reads or relays: runs as it comes, after the peer's earlier changes but holding up none (Session.after). */
export const ordered = false

/** @type {import('./index.js').Validator} */
export function validate (m) {
  if (!isPeerId(m.peer)) throw badField('peer', 'a peer id')
  if (!isAssetName(m.hash)) throw badField('hash', 'an SRI sha256 string')
  if (!REPORT_REASONS.includes(/** @type {any} */ (m.reason))) throw badField('reason', `one of ${REPORT_REASONS.join(', ')}`)
}

/** @type {import('./index.js').Handler} */
export async function handle (message, session, { quarantine }) {
  session.requirePeer()
  const peer = /** @type {string} */ (message.peer)
  if (!(session.introductions?.looked(peer, session.now()) ?? false)) throw new MayghError(ERRORS.MGH_ERR_NOT_INTRODUCED, `${peer} was not handed to this peer by a lookup`)
  if (!session.quarantined) await quarantine.accuse(peer, await quarantine.reporterOf(session), /** @type {string} */ (message.reason), /** @type {string} */ (message.hash))
  return message.ref === undefined ? undefined : { type: 'reported', peer }
}
