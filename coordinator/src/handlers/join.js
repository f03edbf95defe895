/**
 * `join`: a client introduces itself and what it already holds; it gets a peer
 * id and the ICE servers to use.
 */
import { randomBytes } from 'node:crypto'
import { ERRORS, MayghError } from '../../../protocol/index.js'

/** @type {import('./index.js').Handler} */
export async function join (message, { session, store, config, shard, sessions, iceServers, coordinator, orphan }) {
  if (session.peerId !== null) throw new MayghError(ERRORS.MGH_ERR_ALREADY_JOINED)
  if (coordinator.draining) throw new MayghError(ERRORS.MGH_ERR_DRAINING)
  const have = [...new Set(/** @type {string[]} */ (message.have ?? []))]
  const id = `${shard}~${randomBytes(16).toString('base64url')}`
  try {
    await store.addPeer(id, have)
  } catch (err) {
    // Maybe listed, maybe not (a timeout cannot tell); this id is never used again: remove it once the store is back.
    orphan(id, have)
    throw err
  }
  session.peerId = id
  session.assets = new Set(have)
  sessions.set(id, session)
  return {
    type: 'welcome',
    id,
    iceServers,
    holding: have.length,
    alternates: coordinator.alternates(),
    limits: {
      maxMessageBytes: config.maxMessageBytes,
      maxAssetsPerPeer: config.maxAssetsPerPeer,
      maxAssetsPerMessage: config.maxAssetsPerMessage
    }
  }
}
