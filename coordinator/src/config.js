/**
 * The coordinator's configuration: one documented defaults object, merged with
 * the caller's options, validated once and frozen. Environment variables and
 * flags are read only in `bin/maygh-coordinator.js`.
 */
import { LIMITS } from '../../protocol/index.js'
import { POLICY_DEFAULTS } from '../../policy/peer-selection.js'
import { REPORT_DEFAULTS } from '../../policy/report-rule.js'
import { LEVELS as LOG_LEVELS } from './logger.js'
import { checkSecret, isOrigin } from './join-token.js'

/** Defaults; DESCRIPTIONS says what each means, README.md "Configuration" lists each with its env var and flag. */
const defaults = {
  port: 7070,
  host: '127.0.0.1',
  stunPort: 3478,
  iceServers: /** @type {RTCIceServerLike[] | null} */ (null),
  iceTransportPolicy: /** @type {'all' | 'relay'} */ ('all'),
  turnUrls: /** @type {string[] | null} */ (null),
  turnSecret: /** @type {string | null} */ (null),
  turnCredentialSeconds: 86400,
  redisUrl: /** @type {string | null} */ (null),
  shardId: /** @type {string | null} */ (null),
  publicUrl: /** @type {string | null} */ (null),
  shardHeartbeatMs: 1000,
  shardTtlMs: 3000,
  storeTimeoutMs: 1000,
  drainWindowMs: 10000,
  maxMessageBytes: LIMITS.maxMessageBytes,
  hardMaxMessageBytes: LIMITS.hardMaxMessageBytes,
  maxAssetsPerPeer: LIMITS.maxAssetsPerPeer,
  maxAssetsPerMessage: LIMITS.maxAssetsPerMessage,
  maxHoldings: 2_000_000,
  maxHolders: POLICY_DEFAULTS.maxHolders,
  candidateSample: POLICY_DEFAULTS.candidateSample,
  maxConnections: 20_000,
  maxConnectionsPerIp: 500,
  limitsByAddress: true,
  joinDeadlineMs: 10_000,
  httpTimeoutMs: 5000,
  maxSendBufferBytes: 1024 * 1024,
  pingIntervalMs: 30000,
  rateLimitPerSecond: 200,
  rateLimitBurst: 400,
  rateLimitCloseAfter: 1000,
  allowedOrigins: /** @type {string[] | null} */ (null),
  tokenSecrets: /** @type {string[] | null} */ (null),
  tokenRenewSeconds: 3600,
  introductionTtlMs: 30_000,
  introductionSignalBytes: 32 * 1024,
  maxIntroductions: 256,
  newHolderBurst: 128,
  newHoldersPerSecond: 1,
  reportThreshold: REPORT_DEFAULTS.reportThreshold,
  reportWindowMs: REPORT_DEFAULTS.reportWindowMs,
  quarantineMs: REPORT_DEFAULTS.quarantineMs,
  pairWithinNetwork: false,
  usageFlushMs: 5000,
  usageHistoryMs: 86_400_000,
  maxUsageSites: 100,
  logLevel: 'info',
  logIps: false
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
export const DEFAULTS = Object.freeze(defaults)

/**
 * What each option means, one line each: `maygh-coordinator --help` prints
 * these (help.js), and coordinator/test/help.test.js checks that every option
 * has one and that README.md "Configuration" lists every option.
 * @type {Readonly<Record<keyof typeof defaults, string>>}
 */
export const DESCRIPTIONS = Object.freeze({
  port: 'TCP port of the WebSocket + HTTP server (0 = any free port)',
  host: 'address the WebSocket, HTTP and STUN servers bind to',
  stunPort: 'UDP port of the STUN server (0 = any free port, -1 = no STUN server)',
  iceServers: 'ICE servers handed to peers in `welcome`: `stun:host:port[,…]` or a JSON RTCIceServer array; none = this coordinator\'s own STUN server (required when binding 0.0.0.0 or ::)',
  iceTransportPolicy: 'privacy mode when `relay`: peers reach each other only through the TURN relay (needs `turnUrls` and `turnSecret`, or a `turn:` server in iceServers), so no visitor learns another\'s address; the welcome tells browsers to gather relay candidates only, joins of protocol versions before 4 are refused (MGH_ERR_BAD_VERSION), and signals naming other candidates are not passed on (MGH_ERR_RELAY_ONLY). `all` (the default): direct connections where the networks allow',
  turnUrls: 'TURN server URLs (`turn:host:3478,turns:host:5349`, comma separated) each welcome hands out with credentials minted for that peer under turnSecret',
  turnSecret: 'the TURN server\'s shared secret (coturn `static-auth-secret` with `use-auth-secret`; at least 16 characters): welcome credentials are `<expiry>:<peer id>` and its HMAC-SHA1, so no lasting TURN password is in a page',
  turnCredentialSeconds: 'how long the TURN credentials a welcome carries are valid (a page that stays open longer cannot open new relayed channels until it reconnects)',
  redisUrl: 'Redis URL (`redis://`, `rediss://`, or `redis+cluster://host:port,…` for a Cluster); none = the in-process store',
  shardId: 'this coordinator\'s name among its shards (each start adds a random suffix); random when none',
  publicUrl: 'the WebSocket URL browsers reach this coordinator at, handed to clients of other shards as an alternate; none = the URL it listens on',
  shardHeartbeatMs: 'how often this shard renews its entry in the shard registry',
  shardTtlMs: 'how long a shard\'s entry lives without a beat: a dead shard\'s peers stop being handed out this long after its last beat (at least twice shardHeartbeatMs)',
  storeTimeoutMs: 'every request is answered within this long of its arrival, whatever the store does: a store call not answered by then is abandoned (lookups answer "no holders", writes MGH_ERR_STORE), and /readyz says 503 until a beat succeeds again',
  drainWindowMs: 'on SIGTERM, clients are told to move to other coordinators spread over this long; the process exits when they have gone',
  maxMessageBytes: 'largest message answered normally; bigger ones get MGH_ERR_TOO_LARGE',
  hardMaxMessageBytes: 'largest frame read at all; bigger ones close the socket with 1009',
  maxAssetsPerPeer: 'assets the coordinator lists for one peer; more get MGH_ERR_TOO_MANY_ASSETS',
  maxAssetsPerMessage: 'assets one join or update may name',
  maxHoldings: '(peer, asset) pairs this coordinator lists over all its peers; a join or update past it gets MGH_ERR_CAPACITY',
  maxHolders: 'holders a lookup returns at most',
  candidateSample: 'holders read from the store per lookup before ranking',
  maxConnections: 'open sockets this process accepts; more are refused at the upgrade (HTTP 503, MGH_ERR_CAPACITY)',
  maxConnectionsPerIp: 'open sockets from one IP address (0 = no limit); more are refused at the upgrade (HTTP 429, MGH_ERR_TOO_MANY_CONNECTIONS)',
  limitsByAddress: 'a client\'s rate limit follows its address across its sockets (a new socket starts where its last one left off, and one cut off for flooding is refused new sockets until it has been quiet for a second); behind a proxy, where every client has the proxy\'s address, set it off (with join tokens the limit follows the visitor either way)',
  joinDeadlineMs: 'a socket that has not joined by then is closed (MGH_ERR_JOIN_DEADLINE)',
  httpTimeoutMs: 'a connection that has not sent a whole HTTP request (the WebSocket upgrade included) by then is closed (HTTP 408), looked for every second; so is one that sends nothing',
  maxSendBufferBytes: 'bytes queued to one socket that it has not read; past it the socket is closed as a slow reader (MGH_ERR_SLOW_READER)',
  pingIntervalMs: 'WebSocket ping period: a socket silent for a whole period is pinged, and closed (its peer removed) if still silent one period later',
  rateLimitPerSecond: 'messages a peer may send per second, sustained; the first one over gets MGH_ERR_RATE_LIMITED, the rest are dropped unread',
  rateLimitBurst: 'messages a peer may send in a burst',
  rateLimitCloseAfter: 'messages dropped in a row by the rate limit before the socket is closed (MGH_ERR_RATE_LIMITED)',
  allowedOrigins: 'origins (`https://shop.example`, comma separated) whose pages may use this coordinator; a socket from any other, or with no Origin header, is closed with MGH_ERR_ORIGIN_NOT_ALLOWED; none = any origin (logged as a warning at start unless tokenSecrets is set)',
  tokenSecrets: 'secrets (comma separated, each at least 32 characters) that sign join tokens (`maygh-token`); with any, a join needs a valid token for its page\'s origin. The first signs the fresh token each `welcome` carries; the others still verify (rotation)',
  tokenRenewSeconds: 'lifetime of the fresh token each `welcome` carries (the client joins with it next time)',
  introductionTtlMs: 'how long after a lookup introduced two peers they may send each other `connect` signals (a lookup that hands the same peer out again renews the introduction, with a fresh signal budget); any other `connect` gets MGH_ERR_NOT_INTRODUCED',
  introductionSignalBytes: 'signal bytes one peer may send another per introduction, counted as the `connect` frames its target is sent (an offer or answer is 1-3 KB, an ICE candidate 0.3 KB, each with about 80 bytes of envelope); more get MGH_ERR_SIGNAL_BUDGET',
  maxIntroductions: 'introductions kept per peer (the least recently made or renewed go first)',
  newHolderBurst: 'holders a client may be handed that it has not been handed before, in a burst (0 = no bound): past it, lookups name only holders it already knows, so that holder ids (and, by signalling them, addresses) cannot be harvested cheaply. Counted per address (unless limitsByAddress is off) and per visitor with join tokens, across all of a client\'s sockets',
  newHoldersPerSecond: 'how fast that allowance refills, in holders per second',
  reportThreshold: 'distinct visitors that must report a peer for bad bytes or a false miss within reportWindowMs before it is quarantined (reports of a channel that never opened or stalled do not count: they may be the reporter\'s network\'s fault)',
  reportWindowMs: 'how far back reports of a peer count',
  quarantineMs: 'how long a quarantined visitor is not handed out and its announcements are ignored (it survives reconnecting under a new peer id)',
  pairWithinNetwork: 'hand a visitor out only to visitors of its own network (its /24 or /48, judged from the socket and kept only as a salted hash), so that peers learn the addresses of their own network\'s visitors only; less sharing across networks',
  usageFlushMs: 'how often this coordinator adds the byte counts its visitors report (`usage`) to the store, one batch per site',
  usageHistoryMs: 'how long the store keeps each site\'s per-minute byte counts (what the dashboard charts); totals and top assets are kept',
  maxUsageSites: 'sites (page origins) whose byte counts the store keeps; reports from pages of further sites are not counted (allowedOrigins bounds the sites anyway)',
  logLevel: 'log level: fatal, error, warn, info, debug, trace or silent',
  logIps: 'log client IP addresses (off: addresses are never logged)'
})

/** @typedef {{ urls: string | string[], username?: string, credential?: string }} RTCIceServerLike */
/** @typedef {typeof DEFAULTS} Config */

/** The integer options' ranges, [least, most]; the bin's messages quote them too. */
export const INTEGER_RANGES = /** @type {const} */ ({
  port: [0, 65535],
  stunPort: [-1, 65535],
  maxMessageBytes: [256, 16 * 1024 * 1024],
  hardMaxMessageBytes: [256, 64 * 1024 * 1024],
  maxAssetsPerPeer: [1, 10_000_000],
  maxAssetsPerMessage: [1, 100_000],
  maxHolders: [1, 64],
  candidateSample: [1, 1024],
  pingIntervalMs: [100, 3_600_000],
  shardHeartbeatMs: [50, 60_000],
  shardTtlMs: [150, 600_000],
  storeTimeoutMs: [10, 60_000],
  drainWindowMs: [0, 600_000],
  rateLimitPerSecond: [1, 1_000_000],
  rateLimitBurst: [1, 1_000_000],
  rateLimitCloseAfter: [1, 1_000_000_000],
  maxHoldings: [1, 1_000_000_000],
  maxConnections: [1, 10_000_000],
  maxConnectionsPerIp: [0, 10_000_000],
  joinDeadlineMs: [100, 3_600_000],
  httpTimeoutMs: [100, 600_000],
  maxSendBufferBytes: [16 * 1024, 1024 * 1024 * 1024],
  tokenRenewSeconds: [60, 7 * 86400],
  introductionTtlMs: [1000, 3_600_000],
  introductionSignalBytes: [1024, 16 * 1024 * 1024],
  maxIntroductions: [1, 100_000],
  newHolderBurst: [0, 1_000_000],
  newHoldersPerSecond: [0, 1_000_000],
  turnCredentialSeconds: [60, 30 * 86400],
  reportThreshold: [1, 1000],
  reportWindowMs: [1000, 7 * 86_400_000],
  quarantineMs: [1000, 30 * 86_400_000],
  usageFlushMs: [100, 600_000],
  usageHistoryMs: [60_000, 31 * 86_400_000],
  maxUsageSites: [1, 100_000]
})

/**
 * Merge `options` over {@link DEFAULTS}, validate, and freeze.
 *
 * @param {Partial<typeof DEFAULTS>} [options]
 * @param {object} [how]
 * @param {(option: string) => string} [how.nameOf] how messages name an option:
 *   `"port"` by default; the bin names the flag or environment variable it came from
 * @returns {Readonly<Config>}
 * @throws {TypeError} on an unknown option, a value of the wrong type or range,
 *   or an impossible combination
 */
export function resolveConfig (options = {}, { nameOf = (option) => JSON.stringify(option) } = {}) {
  for (const key of Object.keys(options)) {
    if (!(key in DEFAULTS)) throw new TypeError(`unknown coordinator option "${key}"`)
  }
  const n = nameOf
  const config = { ...DEFAULTS, ...stripUndefined(options) }
  for (const [key, [min, max]] of Object.entries(INTEGER_RANGES)) {
    const value = config[key]
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new TypeError(`option ${n(key)} must be an integer from ${min} to ${max}, got ${typeof value === 'number' ? value : JSON.stringify(value)}`)
    }
  }
  if (typeof config.host !== 'string' || config.host === '') throw new TypeError(`option ${n('host')} must be a non-empty string`)
  if (!LOG_LEVELS.includes(config.logLevel)) throw new TypeError(`option ${n('logLevel')} must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(config.logLevel)}`)
  for (const key of /** @type {const} */ (['logIps', 'pairWithinNetwork', 'limitsByAddress'])) {
    if (typeof config[key] !== 'boolean') throw new TypeError(`option ${n(key)} must be true or false`)
  }
  if (config.redisUrl !== null && !/^(rediss?|redis\+cluster):\/\/./.test(String(config.redisUrl))) {
    throw new TypeError(`option ${n('redisUrl')} must be a redis://, rediss:// or redis+cluster://host:port,… URL, got ${JSON.stringify(config.redisUrl)}`)
  }
  if (config.hardMaxMessageBytes < config.maxMessageBytes) {
    throw new TypeError(`option ${n('hardMaxMessageBytes')} (${config.hardMaxMessageBytes}) must be at least ${n('maxMessageBytes')} (${config.maxMessageBytes})`)
  }
  if (config.maxAssetsPerMessage > config.maxAssetsPerPeer) {
    throw new TypeError(`option ${n('maxAssetsPerMessage')} (${config.maxAssetsPerMessage}) must not exceed ${n('maxAssetsPerPeer')} (${config.maxAssetsPerPeer})`)
  }
  if (config.candidateSample < config.maxHolders) {
    throw new TypeError(`option ${n('candidateSample')} (${config.candidateSample}) must be at least ${n('maxHolders')} (${config.maxHolders})`)
  }
  if (config.rateLimitBurst < config.rateLimitPerSecond / 10) {
    throw new TypeError(`option ${n('rateLimitBurst')} (${config.rateLimitBurst}) must be at least a tenth of ${n('rateLimitPerSecond')} (${config.rateLimitPerSecond})`)
  }
  if (config.iceServers !== null && !(Array.isArray(config.iceServers) && config.iceServers.every(isIceServer))) {
    throw new TypeError(`option ${n('iceServers')} must be an array of {urls, username?, credential?}`)
  }
  if (config.iceServers === null && (config.host === '0.0.0.0' || config.host === '::')) {
    throw new TypeError(`binding to ${config.host}, give ${n('iceServers')} with an address browsers reach the STUN server at`)
  }
  if (config.iceServers === null && config.stunPort === -1) {
    throw new TypeError(`with no STUN server (${n('stunPort')} -1), ${n('iceServers')} must be given`)
  }
  if (config.shardTtlMs < 2 * config.shardHeartbeatMs) {
    throw new TypeError(`option ${n('shardTtlMs')} (${config.shardTtlMs}) must be at least twice ${n('shardHeartbeatMs')} (${config.shardHeartbeatMs}): a shard must survive one late beat`)
  }
  if (config.publicUrl !== null && !/^wss?:\/\/./.test(String(config.publicUrl))) {
    throw new TypeError(`option ${n('publicUrl')} must be a ws:// or wss:// URL, got ${JSON.stringify(config.publicUrl)}`)
  }
  if (config.allowedOrigins !== null && !(Array.isArray(config.allowedOrigins) && config.allowedOrigins.length > 0 && config.allowedOrigins.every(isOrigin))) {
    throw new TypeError(`option ${n('allowedOrigins')} must be a non-empty list of origins (scheme://host[:port], no path)`)
  }
  if (config.tokenSecrets !== null) {
    if (!Array.isArray(config.tokenSecrets) || config.tokenSecrets.length === 0) throw new TypeError(`option ${n('tokenSecrets')} must be a non-empty list of secrets`)
    for (const secret of config.tokenSecrets) {
      try {
        checkSecret(secret)
      } catch (err) {
        throw new TypeError(`option ${n('tokenSecrets')}: ${/** @type {Error} */ (err).message}`)
      }
    }
  }
  if (config.iceTransportPolicy !== 'all' && config.iceTransportPolicy !== 'relay') throw new TypeError(`option ${n('iceTransportPolicy')} must be all or relay, got ${JSON.stringify(config.iceTransportPolicy)}`)
  if ((config.turnUrls === null) !== (config.turnSecret === null)) throw new TypeError(`options ${n('turnUrls')} and ${n('turnSecret')} go together: give both or neither`)
  if (config.turnUrls !== null && !(Array.isArray(config.turnUrls) && config.turnUrls.length > 0 && config.turnUrls.every((u) => /^turns?:[^\s]+$/.test(u)))) {
    throw new TypeError(`option ${n('turnUrls')} must be a non-empty list of turn: or turns: URLs`)
  }
  if (config.turnSecret !== null && !(typeof config.turnSecret === 'string' && config.turnSecret.length >= 16)) throw new TypeError(`option ${n('turnSecret')} must be a string of at least 16 characters`)
  if (config.iceTransportPolicy === 'relay' && config.turnUrls === null && !(config.iceServers ?? []).some((s) => [s.urls].flat().some((u) => /^turns?:/.test(u)))) {
    throw new TypeError(`option ${n('iceTransportPolicy')} relay needs a TURN server: ${n('turnUrls')} and ${n('turnSecret')}, or a turn: URL in ${n('iceServers')}`)
  }
  if (config.shardId !== null && !/^[\w.-]{1,48}$/.test(config.shardId)) throw new TypeError(`option ${n('shardId')} must be 1-48 of [A-Za-z0-9_.-], got ${JSON.stringify(config.shardId)}`)
  return Object.freeze(config)
}

/**
 * @param {object} options
 * @returns {object} the options without keys whose value is undefined
 */
function stripUndefined (options) {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined))
}

/**
 * @param {unknown} s
 * @returns {boolean}
 */
function isIceServer (s) {
  if (s === null || typeof s !== 'object') return false
  const urls = /** @type {{ urls?: unknown }} */ (s).urls
  return typeof urls === 'string' || (Array.isArray(urls) && urls.length > 0 && urls.every((u) => typeof u === 'string'))
}
