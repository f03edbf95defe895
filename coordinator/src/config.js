/**
 * The coordinator's configuration: one documented defaults object, merged with
 * the caller's options, validated once and frozen. Environment variables and
 * flags are read only in `bin/maygh-coordinator.js`.
 */
import { LIMITS } from '../../protocol/index.js'
import { POLICY_DEFAULTS } from './policy/peer-selection.js'

/** Defaults; README.md "Configuration" lists each with its env var and flag. */
const defaults = {
  /** TCP port of the WebSocket + HTTP server (0 = any free port) */
  port: 7070,
  /** address the WebSocket, HTTP and STUN servers bind to */
  host: '127.0.0.1',
  /** UDP port of the STUN server (0 = any free port, -1 = no STUN server) */
  stunPort: 3478,
  /** ICE servers handed to peers in `welcome`; null = this coordinator's own STUN server */
  iceServers: /** @type {RTCIceServerLike[] | null} */ (null),
  /** Redis URL (`redis://`, `rediss://`, or `redis+cluster://host:port,…` for a Cluster); null = the in-process store */
  redisUrl: /** @type {string | null} */ (null),
  /** this coordinator's name among its shards (each start adds a random suffix); random when null */
  shardId: /** @type {string | null} */ (null),
  /** the WebSocket URL browsers reach this coordinator at, handed to clients of other shards as an alternate; null = the URL it listens on */
  publicUrl: /** @type {string | null} */ (null),
  /** how often this shard renews its entry in the shard registry */
  shardHeartbeatMs: 1000,
  /** how long a shard's entry lives without a beat: a dead shard's peers stop being handed out this long after its last beat */
  shardTtlMs: 3000,
  /** a store command not answered by then fails (lookups answer "no holders", writes MGH_ERR_STORE) */
  storeTimeoutMs: 1000,
  /** on SIGTERM, clients are told to move to other coordinators spread over this long; the process exits when they have gone */
  drainWindowMs: 10000,
  /** largest message answered normally; bigger ones get MGH_ERR_TOO_LARGE */
  maxMessageBytes: LIMITS.maxMessageBytes,
  /** largest frame read at all; bigger ones close the socket with 1009 */
  hardMaxMessageBytes: LIMITS.hardMaxMessageBytes,
  /** assets the coordinator lists for one peer */
  maxAssetsPerPeer: LIMITS.maxAssetsPerPeer,
  /** assets one join or update may name */
  maxAssetsPerMessage: LIMITS.maxAssetsPerMessage,
  /** holders a lookup returns at most */
  maxHolders: POLICY_DEFAULTS.maxHolders,
  /** holders read from the store per lookup before ranking */
  candidateSample: POLICY_DEFAULTS.candidateSample,
  /** WebSocket ping period; a peer that misses one is removed */
  pingIntervalMs: 30000,
  /** messages a peer may send per second, sustained */
  rateLimitPerSecond: 200,
  /** messages a peer may send in a burst */
  rateLimitBurst: 400
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
export const DEFAULTS = Object.freeze(defaults)

/** @typedef {{ urls: string | string[], username?: string, credential?: string }} RTCIceServerLike */
/** @typedef {typeof DEFAULTS} Config */

const INTEGER_RANGES = /** @type {const} */ ({
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
  rateLimitBurst: [1, 1_000_000]
})

/**
 * Merge `options` over {@link DEFAULTS}, validate, and freeze.
 *
 * @param {Partial<typeof DEFAULTS>} [options]
 * @returns {Readonly<Config>}
 * @throws {TypeError} on an unknown option, a value of the wrong type or range,
 *   or an impossible combination
 */
export function resolveConfig (options = {}) {
  for (const key of Object.keys(options)) {
    if (!(key in DEFAULTS)) throw new TypeError(`unknown coordinator option "${key}"`)
  }
  const config = { ...DEFAULTS, ...stripUndefined(options) }
  for (const [key, [min, max]] of Object.entries(INTEGER_RANGES)) {
    const value = config[key]
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new TypeError(`option "${key}" must be an integer from ${min} to ${max}, got ${typeof value === 'number' ? value : JSON.stringify(value)}`)
    }
  }
  if (typeof config.host !== 'string' || config.host === '') throw new TypeError('option "host" must be a non-empty string')
  if (config.redisUrl !== null && !/^(rediss?|redis\+cluster):\/\/./.test(String(config.redisUrl))) {
    throw new TypeError('option "redisUrl" must be a redis://, rediss:// or redis+cluster://host:port,… URL')
  }
  if (config.hardMaxMessageBytes < config.maxMessageBytes) {
    throw new TypeError('option "hardMaxMessageBytes" must be at least "maxMessageBytes"')
  }
  if (config.maxAssetsPerMessage > config.maxAssetsPerPeer) {
    throw new TypeError('option "maxAssetsPerMessage" must not exceed "maxAssetsPerPeer"')
  }
  if (config.candidateSample < config.maxHolders) {
    throw new TypeError('option "candidateSample" must be at least "maxHolders"')
  }
  if (config.rateLimitBurst < config.rateLimitPerSecond / 10) {
    throw new TypeError('option "rateLimitBurst" must be at least a tenth of "rateLimitPerSecond"')
  }
  if (config.iceServers !== null && !(Array.isArray(config.iceServers) && config.iceServers.every(isIceServer))) {
    throw new TypeError('option "iceServers" must be an array of {urls, username?, credential?}')
  }
  if (config.iceServers === null && (config.host === '0.0.0.0' || config.host === '::')) {
    throw new TypeError(`binding to ${config.host}, give "iceServers" with an address browsers reach the STUN server at`)
  }
  if (config.iceServers === null && config.stunPort === -1) {
    throw new TypeError('with no STUN server (stunPort -1), "iceServers" must be given')
  }
  if (config.shardTtlMs < 2 * config.shardHeartbeatMs) {
    throw new TypeError('option "shardTtlMs" must be at least twice "shardHeartbeatMs" (a shard must survive one late beat)')
  }
  if (config.publicUrl !== null && !/^wss?:\/\/./.test(String(config.publicUrl))) {
    throw new TypeError('option "publicUrl" must be a ws:// or wss:// URL')
  }
  if (config.shardId !== null && !/^[\w.-]{1,48}$/.test(config.shardId)) throw new TypeError('option "shardId" must be 1-48 of [A-Za-z0-9_.-]')
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
