/**
 * The store interface: the coordinator's client map and content-location map,
 * the registry of live coordinator shards, and the message bus that carries
 * `connect` relays between shards.
 *
 * Two implementations, one contract (`coordinator/test/store-contract.js`):
 * `MemoryStore` (in-process; the embedded default and what several coordinators
 * in one process share in tests) and `RedisStore` (production; shared by every
 * shard). Callers pass exact changes: a coordinator session knows what its own
 * peer holds, so the store never has to diff.
 *
 * Liveness is a shard's, not a peer's: a peer id names its shard
 * (`<shard>~<random>`, protocol/messages.js), every shard beats its entry in
 * the registry, and the store hands out only holders whose shard is live. When
 * a shard stops beating, its peers stop being handed out at once, without a
 * per-peer timer or a per-candidate read, and the first live shard to see it
 * reaps what it left (`reapShard`).
 *
 * @typedef {object} PeerRecord
 * @property {string} id
 * @property {string} shard coordinator the peer's socket is on
 * @property {string[]} assets hashes the peer holds
 *
 * @typedef {object} Holder one entry of an asset's holder list
 * @property {string} id
 * @property {number} lastChosen when a lookup of this asset last handed this holder out first (0 = never)
 *
 * @typedef {object} ShardInfo what a shard tells the others with each beat
 * @property {string} url its public WebSocket URL ('' when it has none to give)
 * @property {number} peers peers joined on it
 * @property {number} holdings (peer, asset) pairs they hold
 * @property {boolean} [draining] whether it is draining (not an alternate to send clients to)
 *
 * @typedef {object} Beat what a shard learns from its beat
 * @property {Map<string, ShardInfo>} live every live shard (this one included), as of now
 * @property {string[]} dead shards whose entry expired, handed to this caller alone to reap
 * @property {boolean} lost the store had lost this shard's entry or part of its data
 *   (Redis restarted empty, flushed, failed over without a replica, or this shard was
 *   reaped while it could not reach the store): the caller registers its peers again
 *
 * @typedef {object} Store
 *   The calls on a lookup's and an update's path (`updatePeer`, `sampleHolders`, `markChosen`)
 *   return a promise, or their result itself when they have it at once (the in-process store):
 *   a caller that awaits them works either way; the handlers on that path then answer without a
 *   promise or a microtask on the in-process store.
 * @property {boolean} failsInParts whether part of the store can fail while the rest answers
 *   (a Redis Cluster's master failing over): then one request not answered in time says
 *   nothing of the whole, and only a failed beat (which any live part answers) does
 * @property {(listener: () => void) => () => void} onLate
 *   call `listener` whenever a call is abandoned for not being answered within the store's
 *   timeout (what a coordinator's readiness follows); returns what stops it
 * @property {(shard: string, info: ShardInfo, ttlMs: number) => Promise<Beat>} beat
 *   register `shard` as live for `ttlMs`, and learn which shards are live
 * @property {(shard: string) => Promise<void>} leave
 *   take `shard` out of the registry (its peers are already removed)
 * @property {(shard: string) => Promise<void>} reapShard
 *   remove every peer a dead shard left behind
 * @property {(id: string, assets: readonly string[]) => Promise<void>} addPeer
 *   put a peer in the client map and list it as a holder of `assets`; for a peer
 *   already listed (listed again after the store lost data), entries it has keep their times
 * @property {(id: string, added: readonly string[], removed: readonly string[]) => Promise<void> | void} updatePeer
 *   apply an exact change to what an online peer holds
 * @property {(id: string, assets: readonly string[]) => Promise<void>} removePeer
 *   take a peer (holding exactly `assets`) out of every map
 * @property {(hashes: readonly string[], limit: number) => Promise<Holder[][]> | Holder[][]} sampleHolders
 *   for each of `hashes`, up to `limit` of its holders on live shards, a random sample when
 *   there are more (a page's lookup is one call: one round trip)
 * @property {(choices: readonly (readonly [hash: string, id: string])[], at: number) => Promise<void> | void} markChosen
 *   record that a lookup of each choice's hash handed its id out first at time `at` (never
 *   recreates a gone entry)
 * @property {(id: string) => Promise<boolean>} hasPeer
 *   whether a peer is listed (one cheap read, sent with whatever else the caller sends)
 * @property {(id: string) => Promise<PeerRecord | null>} getPeer
 *   the client map's entry for a peer, null when it is not listed
 * @property {(shard: string) => boolean} isLive
 *   whether `shard` is live, as of the last beat (no round trip)
 * @property {() => Promise<void>} refresh
 *   read the registry again without beating (a shard started since the last beat);
 *   cheap to call often: at most one read runs, and reads are spaced out
 * @property {() => Map<string, ShardInfo>} liveShards
 *   every live shard and what it said in its last beat, as of the last beat (no round trip)
 * @property {(shard: string, message: object) => Promise<number>} publish
 *   deliver a message to whichever coordinator subscribed as `shard`; resolves to how many
 *   subscriptions it reached (0: no coordinator listens as `shard`, e.g. it died since its last beat)
 * @property {(shard: string, onMessage: (message: unknown) => void) => Promise<() => Promise<void>>} subscribe
 *   receive the messages published to `shard`; resolves to an unsubscribe function
 * @property {(subject: string, reporter: string, at: number, windowMs: number) => Promise<number>} report
 *   record that `reporter` reported `subject` (a visitor, not a peer id: it outlives reconnections)
 *   at `at` (ms); resolves to how many distinct reporters did so in the `windowMs` up to `at`
 * @property {(subject: string, ms: number) => Promise<void>} quarantine
 *   quarantine `subject` for `ms` from now (a later call replaces the time left)
 * @property {(subject: string) => Promise<boolean>} isQuarantined
 *   whether `subject` is in quarantine now
 * @property {() => Promise<string>} networkSalt
 *   a random salt every shard of this store shares, replaced each day: what reporters'
 *   network prefixes are hashed with, so that no address or prefix is kept in clear
 * @property {(site: string, at: number, counts: UsageCounts, assets: [string, number][], limits: UsageLimits) => Promise<boolean>} addUsage
 *   add what a site's visitors reported (usage.js sums them first) to its totals, to the minute
 *   `at` (ms) falls in, and to its assets' peer bytes; false, and nothing added, when the store
 *   already keeps `maxSites` other sites
 * @property {(site: string, since: number, top: number) => Promise<SiteUsage>} siteUsage
 *   a site's usage: totals, the minutes from `since` on, and its `top` assets
 * @property {() => Promise<string[]>} usageSites the sites with usage
 * @property {(site: string, id: string, ms: number) => Promise<boolean>} claimUsage
 *   whether this is the first time a usage report with `id` came for `site` in the last `ms`
 *   (the id is kept `ms` from its first time)
 * @property {() => Promise<void>} close
 *
 * @typedef {Record<typeof import('../../../protocol/index.js').USAGE_SOURCES[number], number>} UsageCounts
 *   bytes by where they came from (`peer`, `origin`, `cache`) or went (`served`)
 * @typedef {{ historyMs: number, maxSites: number }} UsageLimits
 *   how long per-minute figures are kept, and how many sites are counted at most
 * @typedef {object} SiteUsage
 * @property {UsageCounts} total since the store began counting the site
 * @property {{ at: number, counts: UsageCounts }[]} minutes each minute (its start, ms) with reports, oldest first
 * @property {[string, number][]} assets asset paths by the peer bytes they saved, most first
 */

/** Usage is kept per minute: the start of the minute `at` falls in. */
export const USAGE_MINUTE_MS = 60_000
/** Asset paths kept per site (the ones that saved the most). */
export const USAGE_ASSETS_KEPT = 1000
/** @param {number} at ms @returns {number} */
export const minuteOf = (at) => at - (at % USAGE_MINUTE_MS)
/** @returns {UsageCounts} */
export const noUsage = () => ({ peer: 0, origin: 0, cache: 0, served: 0 })

/** how long a network salt lasts before the store makes a new one */
export const SALT_MS = 86_400_000

/**
 * The registry as a store keeps it between beats: shard → what it said and
 * when its entry expires (on the store's clock).
 * @typedef {Map<string, { info: ShardInfo, expiresAt: number }>} ShardTable
 */

/**
 * @param {ShardTable} shards
 * @param {string} shard
 * @param {number} now
 * @returns {boolean} whether `shard`'s entry has not expired by `now`
 */
export function isLiveIn (shards, shard, now) {
  const entry = shards.get(shard)
  return entry !== undefined && entry.expiresAt > now
}

/**
 * @param {ShardTable} shards
 * @param {number} now
 * @returns {Map<string, ShardInfo>} the shards live at `now`, with what each said
 */
export function liveIn (shards, now) {
  /** @type {Map<string, ShardInfo>} */
  const live = new Map()
  for (const [shard, { info, expiresAt }] of shards) if (expiresAt > now) live.set(shard, info)
  return live
}
