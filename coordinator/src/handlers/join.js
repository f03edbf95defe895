/**
 * `join`: a client introduces itself and what it already holds; it gets a peer
 * id and the ICE servers to use.
 */
import { randomBytes } from 'node:crypto'
import { ERRORS, MayghError } from '../../../protocol/index.js'

/** @type {import('./index.js').Handler} */
export async function join (message, { session, store, config, shard, sessions, iceServers }) {
  if (session.peerId !== null) throw new MayghError(ERRORS.MGH_ERR_ALREADY_JOINED)
  const have = [...new Set(/** @type {string[]} */ (message.have ?? []))]
  const id = `${shard}~${randomBytes(16).toString('base64url')}`
  await store.addPeer(id, have)
  session.peerId = id
  session.assets = new Set(have)
  sessions.set(id, session)
  return {
    type: 'welcome',
    id,
    iceServers,
    holding: have.length,
    limits: {
      maxMessageBytes: config.maxMessageBytes,
      maxAssetsPerPeer: config.maxAssetsPerPeer,
      maxAssetsPerMessage: config.maxAssetsPerMessage
    }
  }
}
