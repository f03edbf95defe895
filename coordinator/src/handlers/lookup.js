/**
 * `lookup`: which online peers hold an asset. The store samples holders on live
 * shards (step 1 of the shared peer-selection rule, `policy/peer-selection.js`);
 * this handler ranks them and marks the first one's entry for this asset
 * (steps 2 and 3), exactly as the simulator does. The holders it names are
 * introduced to the asker: the only peers its `connect`s may reach.
 */
import { HolderRanking, rankKey } from '../policy/peer-selection.js'

/** @type {import('./index.js').Handler} */
export async function lookup (message, session, { store, config, counters, metrics, clock, warn }) {
  const asker = session.requirePeer().peerId
  const hash = /** @type {string} */ (message.hash)
  // Under pairWithinNetwork, the holders listed under the asker's network only.
  const [key] = session.keys([hash])
  let holders
  const started = performance.now()
  try {
    holders = await store.sampleHolders(key, config.candidateSample)
  } catch (err) {
    // A store that is down or slow answers "no holders": the page goes to the origin at once.
    warn(err, 'lookup failed')
    holders = []
  }
  metrics.observeStore('lookup', performance.now() - started)
  const connected = new Set(/** @type {string[]} */ (message.connected ?? []))
  /** @type {HolderRanking<string>} */
  const ranking = new HolderRanking(config.maxHolders, asker)
  for (const { id, lastChosen } of holders) {
    const key = rankKey(connected.has(id), lastChosen)
    if (ranking.wants(id, key)) ranking.insert(id, key)
  }
  const peers = ranking.ids.slice(0, ranking.size)
  // The asker may now signal these holders (and they it, once it has).
  const introductions = session.introduced()
  const now = session.now()
  for (const peer of peers) introductions.add(peer, now, true)
  // Not awaited: commands on one store connection run in order, so the next
  // lookup already sees this choice; the reply need not wait for it.
  if (peers.length > 0) store.markChosen(key, ranking.marked(), clock()).catch((err) => warn(err, 'markChosen failed'))
  counters.lookups++
  if (peers.length > 0) counters.lookupHits++
  metrics.countLookup(peers.length > 0)
  return { type: 'holders', hash, peers }
}
