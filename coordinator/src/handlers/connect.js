/**
 * `connect`: relay a WebRTC signal (offer, answer, ICE candidate) to another
 * peer, directly when its socket is on this shard, else over the store's bus to
 * the shard the client map names. No reply on success.
 */
import { MayghError } from '../errors.js'

/** @type {import('./index.js').Handler} */
export async function connect (message, { session, store, relay }) {
  const from = session.requirePeer().peerId
  const to = /** @type {string} */ (message.to)
  if (to === from) throw new MayghError('MGH_ERR_BAD_FIELD', '"to" must be another peer')
  const signal = /** @type {object} */ (message.signal)
  if (relay.deliverLocal(to, from, signal)) return undefined
  const shard = await store.shardOf(to)
  if (shard === null) throw new MayghError('MGH_ERR_UNKNOWN_PEER', to)
  await relay.forward(shard, to, from, signal)
  return undefined
}
