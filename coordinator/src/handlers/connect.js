/**
 * `connect`: relay a WebRTC signal (offer, answer, ICE candidate) to another
 * peer, directly when its socket is on this shard, else over the store's bus to
 * the shard the client map names. A request with a `ref` is acknowledged with
 * `relayed` once the signal is handed to the target's socket or to its shard's
 * bus, so a client never waits out a timer on success; one without a `ref`
 * (trickled ICE candidates) gets no reply unless it fails.
 */
import { ERRORS, MayghError } from '../../../protocol/index.js'

/** @type {import('./index.js').Handler} */
export async function connect (message, { session, store, relay }) {
  const from = session.requirePeer().peerId
  const to = /** @type {string} */ (message.to)
  if (to === from) throw new MayghError(ERRORS.MGH_ERR_BAD_FIELD, '"to" must be another peer')
  const signal = /** @type {object} */ (message.signal)
  if (!relay.deliverLocal(to, from, signal)) {
    const shard = await store.shardOf(to)
    if (shard === null) throw new MayghError(ERRORS.MGH_ERR_UNKNOWN_PEER, to)
    await relay.forward(shard, to, from, signal)
  }
  return message.ref === undefined ? undefined : { type: 'relayed', to }
}
