/**
 * The store interface: the coordinator's client map and content-location map,
 * plus the message bus that carries `connect` relays between shards.
 *
 * Two implementations, one contract (`coordinator/test/store-contract.js`):
 * `MemoryStore` (in-process; the embedded default and what several coordinators
 * in one process share in tests) and `RedisStore` (production; shared by every
 * shard). Callers pass exact changes: a coordinator session knows what its own
 * peer holds, so the store never has to diff.
 *
 * @typedef {object} PeerRecord
 * @property {string} id
 * @property {string} shard coordinator the peer's socket is on
 * @property {number} joinedAt ms since the epoch
 * @property {number} lastChosen ms since the epoch a lookup last handed the peer out (0 = never)
 * @property {string[]} assets hashes the peer holds
 *
 * @typedef {object} Holder
 * @property {string} id
 * @property {number} lastChosen
 *
 * @typedef {object} Store
 * @property {(id: string, info: {shard: string, joinedAt: number}, assets: string[]) => Promise<void>} addPeer
 *   put a peer in the client map and list it as a holder of `assets`
 * @property {(id: string, added: string[], removed: string[]) => Promise<void>} updatePeer
 *   apply an exact change to what an online peer holds
 * @property {(id: string, assets?: string[]) => Promise<void>} removePeer
 *   take a peer out of every map; `assets` saves a read when the caller knows them
 * @property {(ids: string[]) => Promise<void>} touchPeers
 *   mark peers as still online (stores that expire records use it; others may ignore it)
 * @property {(hash: string, limit: number) => Promise<Holder[]>} sampleHolders
 *   up to `limit` online holders of `hash`, a random sample when there are more
 * @property {(ids: string[], at: number) => Promise<void>} markChosen
 *   record that a lookup handed these peers out at time `at`
 * @property {(id: string) => Promise<PeerRecord | null>} getPeer
 *   the client map's entry for a peer, null when it is not online
 * @property {(id: string) => Promise<string | null>} shardOf
 *   the shard an online peer is connected to, null when it is not online
 * @property {(shard: string, message: object) => Promise<void>} publish
 *   deliver a message to whichever coordinator subscribed as `shard`
 * @property {(shard: string, onMessage: (message: object) => void) => Promise<() => Promise<void>>} subscribe
 *   receive the messages published to `shard`; resolves to an unsubscribe function
 * @property {() => Promise<{peers: number, holdings: number}>} stats
 *   online peers and (peer, asset) pairs, across all shards
 * @property {() => Promise<void>} close
 */

export {}
