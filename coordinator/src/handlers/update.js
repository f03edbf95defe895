/**
 * `update`: assets a peer added to or removed from its store. Removals apply
 * first, so a hash in both lists ends up held. Only the real difference reaches
 * the store.
 */
import { ERRORS, MayghError } from '../../../protocol/index.js'

/** @type {import('./index.js').Handler} */
export async function update (message, { session, store, config, counters }) {
  const peer = session.requirePeer()
  const held = peer.assets
  const next = new Set(held)
  for (const hash of /** @type {string[]} */ (message.remove ?? [])) next.delete(hash)
  for (const hash of /** @type {string[]} */ (message.add ?? [])) next.add(hash)
  if (next.size > config.maxAssetsPerPeer) {
    throw new MayghError(ERRORS.MGH_ERR_TOO_MANY_ASSETS, `${next.size} > ${config.maxAssetsPerPeer}`)
  }
  const added = [...next].filter((hash) => !held.has(hash))
  const removed = [...held].filter((hash) => !next.has(hash))
  await store.updatePeer(peer.peerId, added, removed)
  session.assets = next
  counters.updates++
  return { type: 'updated', holding: next.size }
}
