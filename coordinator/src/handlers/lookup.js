/**
 * `lookup`: which online peers hold an asset. The store samples candidates; the
 * shared peer-selection policy ranks them (the simulator runs the same policy).
 */
import { selectHolders } from '../policy/peer-selection.js'

/** @type {import('./index.js').Handler} */
export async function lookup (message, { session, store, config, counters, clock, warn }) {
  const asker = session.requirePeer().peerId
  const hash = /** @type {string} */ (message.hash)
  const holders = await store.sampleHolders(hash, config.candidateSample)
  const lastChosen = new Map(holders.map((h) => [h.id, h.lastChosen]))
  const connected = new Set(/** @type {string[]} */ (message.connected ?? []))
  const peers = selectHolders(holders.map((h) => h.id), {
    asker,
    count: config.maxHolders,
    lastChosen: (id) => /** @type {number} */ (lastChosen.get(id)),
    isConnected: (id) => connected.has(id)
  })
  // Only the first is marked: the asker tries it first and falls back to the
  // others only if it fails, so the first is where the upload load lands.
  // Not awaited: commands on one store connection run in order, so the next
  // lookup already sees this choice; the reply need not wait for it.
  if (peers.length > 0) store.markChosen([peers[0]], clock()).catch((err) => warn(err, 'markChosen failed'))
  counters.lookups++
  if (peers.length > 0) counters.lookupHits++
  return { type: 'holders', hash, peers }
}
