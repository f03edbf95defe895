/**
 * The coordinator protocol's constants (docs/protocol.md): version, message
 * types, peer ids, and the coordinator's default limits, which a client
 * assumes until `welcome` tells it the real ones.
 */

/**
 * Protocol version this code speaks: every message may carry `v`. Version 2
 * adds `lookup {hashes}` (many assets in one message); version 3 adds
 * `lookup {offers}` (WebRTC offers the coordinator hands to holders it names,
 * so that reaching a holder costs no round trip of its own); version 4 adds
 * `welcome {iceTransportPolicy}` (privacy mode: connect through the TURN
 * relay only, which a coordinator in that mode requires its clients to
 * understand); version 5 adds `held {hashes}` (which of some assets any
 * visitor holds, as `GET /held` says, over a socket already open: a service
 * worker's); everything of the earlier versions stays as it was.
 */
export const PROTOCOL_VERSION = 5

/**
 * Versions a coordinator answers; any other `v` gets MGH_ERR_BAD_VERSION. An
 * old client (1) keeps working with a new coordinator; a new client needs a
 * coordinator that speaks its version (deploy coordinators first).
 */
export const PROTOCOL_VERSIONS = /* @__PURE__ */ Object.freeze([1, 2, 3, 4, 5])

/** The first version that honours `welcome {iceTransportPolicy: 'relay'}`: a coordinator in privacy mode refuses joins of earlier ones. */
export const RELAY_PROTOCOL_VERSION = 4

/** Manifest format version (`{version, assets}`); a client ignores a manifest of any other. */
export const MANIFEST_VERSION = 1

/** Messages a client sends; each has one handler in the coordinator. */
export const REQUEST_TYPES = /* @__PURE__ */ Object.freeze(/** @type {const} */ (['join', 'update', 'lookup', 'held', 'connect', 'report', 'usage']))

/**
 * What a `report` may say a peer the asker was introduced to did: sent bytes
 * that failed SHA-256, answered `miss` for an asset it announced, never opened
 * a channel (or refused it), or stopped sending mid-transfer.
 */
export const REPORT_REASONS = /* @__PURE__ */ Object.freeze(/** @type {const} */ (['hash_mismatch', 'miss', 'no_channel', 'stall']))

/**
 * What a `usage` report counts, in bytes since the client's last one: asset
 * bytes it got from peers, from the origin and from its own store, and bytes
 * it served to peers.
 */
export const USAGE_SOURCES = /* @__PURE__ */ Object.freeze(/** @type {const} */ (['peer', 'origin', 'cache', 'served']))

/** The most one `usage` count may say (1 TiB): anything more is not one page's traffic. */
export const MAX_USAGE_BYTES = 2 ** 40

/**
 * A `usage` report's `id`: a report a page could not send carries one from
 * then on (it waits in the visitor's storage, where two pages may each take
 * it), and a site counts each id once.
 */
export const USAGE_ID_PATTERN = /^[\w-]{1,32}$/

/** A client's own visitor key (`join`'s `visitor`), kept across visits: what quarantine remembers without tokens. */
export const VISITOR_KEY_PATTERN = /^[\w-]{16,64}$/

/** Shard ids: a coordinator's name among the others (`SHARD_ID`). */
export const SHARD_ID_PATTERN = /^[\w.-]{1,64}$/

/**
 * Peer ids: `<shard>~<16 random bytes in base64url>`. The shard part says
 * which coordinator holds the peer's socket, so relaying to a peer and judging
 * whether it is online need no lookup: a peer lives as long as its shard does.
 */
export const PEER_ID_PATTERN = /^[\w.-]{1,64}~[\w-]{22}$/

/** A new connection id (a signal's `cid`, 1 to 32 characters): the side that starts a connection, or invites one, picks it. */
export const newCid = () => Math.random().toString(36).slice(2, 12)

/**
 * @param {string} id a peer id
 * @returns {string} the shard it names ('' for a string that is not a peer id)
 */
export function shardOfPeer (id) {
  const at = id.indexOf('~')
  return at > 0 ? id.slice(0, at) : ''
}

/** Default limits of a coordinator (README "Configuration"); `welcome` carries the ones in force. */
const limits = {
  /** largest message answered normally; bigger ones get MGH_ERR_TOO_LARGE */
  maxMessageBytes: 64 * 1024,
  /** largest frame read at all; bigger ones close the socket with 1009 */
  hardMaxMessageBytes: 1024 * 1024,
  /** assets the coordinator lists for one peer */
  maxAssetsPerPeer: 10000,
  /** assets one join or update may name */
  maxAssetsPerMessage: 1000,
  /** peers a lookup may say the asker is already connected to */
  maxConnected: 64,
  /** assets one `lookup` may ask for (`hashes`, protocol 2); each costs the sender one message of its rate limit */
  maxLookupHashes: 64,
  /** offers one `lookup` may carry (`offers`, protocol 3): each goes to one holder the reply names */
  maxLookupOffers: 4,
  /** asset paths one `usage` report may name, with the peer bytes each saved */
  maxUsageAssets: 64,
  /** longest asset path a `usage` report may name */
  maxUsagePath: 512
}
// Frozen apart from its literal, so that fields type as number, not as their default values.
export const LIMITS = Object.freeze(limits)

/**
 * The coordinator's HTTP endpoint that says which of some assets any visitor
 * holds (`GET /held?hashes=a,b` → `{held: [a]}`, at most maxLookupHashes),
 * at the same host as its WebSocket: the service worker asks it before its
 * page's script has joined, so that an asset nobody holds goes to the origin
 * at once.
 * @param {string} coordinatorUrl a `ws:` or `wss:` URL
 * @param {string[]} hashes SRI sha256 names
 * @returns {string} its `http:` or `https:` URL
 */
export function heldUrl (coordinatorUrl, hashes) {
  const url = new URL(coordinatorUrl)
  url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:'
  url.pathname = '/held'
  url.search = '?hashes=' + hashes.map(encodeURIComponent).join(',')
  url.hash = ''
  return url.href
}
