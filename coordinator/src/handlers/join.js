/**
 * `join`: a client introduces itself and what it already holds; it gets a peer
 * id and the ICE servers to use.
 */
import { randomBytes } from 'node:crypto'
import { ERRORS, MayghError } from '../../../protocol/index.js'

/** @type {import('./index.js').Handler} */
export async function join (message, session, { store, config, shard, sessions, iceServers, coordinator, orphan, metrics }) {
  if (session.peerId !== null) throw new MayghError(ERRORS.MGH_ERR_ALREADY_JOINED)
  if (coordinator.draining) throw new MayghError(ERRORS.MGH_ERR_DRAINING)
  const have = [...new Set(/** @type {string[]} */ (message.have ?? []))]
  clearTimeout(session.joinTimer)
  session.joinTimer = undefined
  if (coordinator.holdings + have.length > config.maxHoldings) throw new MayghError(ERRORS.MGH_ERR_CAPACITY, `this coordinator lists ${config.maxHoldings} holdings at most`)
  const id = `${shard}~${randomBytes(16).toString('base64url')}`
  // Reserved before the store call, so that joins in flight together cannot pass the cap.
  coordinator.holdings += have.length
  const started = performance.now()
  try {
    await store.addPeer(id, have)
  } catch (err) {
    coordinator.holdings -= have.length
    // Maybe listed, maybe not (a timeout cannot tell); this id is never used again: remove it once the store is back.
    orphan(id, have)
    throw err
  } finally {
    metrics.observeStore('join', performance.now() - started)
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
