/**
 * Reads coordinator options from command-line flags and environment variables
 * (flags win). Used only by the entry point; README.md "Configuration" lists them.
 * A bad flag or value is a MayghError (MGH_CLI_ERR_BAD_FLAG, MGH_CLI_ERR_BAD_VALUE)
 * that names the flag or the environment variable it came from.
 */
import { parseArgs } from 'node:util'
import { CLI_ERRORS, MayghError, readArgs } from '../../protocol/index.js'
import { INTEGER_RANGES } from './config.js'

/** flag name → [option, env var, parse] @type {Readonly<Record<string, [string, string, (text: string) => unknown]>>} */
export const OPTIONS = Object.freeze({
  port: ['port', 'PORT', Number],
  host: ['host', 'HOST', String],
  'stun-port': ['stunPort', 'STUN_PORT', Number],
  'ice-servers': ['iceServers', 'ICE_SERVERS', parseIceServers],
  'ice-transport-policy': ['iceTransportPolicy', 'ICE_TRANSPORT_POLICY', String],
  'turn-urls': ['turnUrls', 'TURN_URLS', parseList],
  'turn-secret': ['turnSecret', 'TURN_SECRET', String],
  'turn-credential-seconds': ['turnCredentialSeconds', 'TURN_CREDENTIAL_SECONDS', Number],
  'redis-url': ['redisUrl', 'REDIS_URL', String],
  'shard-id': ['shardId', 'SHARD_ID', String],
  'public-url': ['publicUrl', 'PUBLIC_URL', String],
  'shard-heartbeat-ms': ['shardHeartbeatMs', 'SHARD_HEARTBEAT_MS', Number],
  'shard-ttl-ms': ['shardTtlMs', 'SHARD_TTL_MS', Number],
  'store-timeout-ms': ['storeTimeoutMs', 'STORE_TIMEOUT_MS', Number],
  'drain-window-ms': ['drainWindowMs', 'DRAIN_WINDOW_MS', Number],
  'max-message-bytes': ['maxMessageBytes', 'MAX_MESSAGE_BYTES', Number],
  'max-assets-per-peer': ['maxAssetsPerPeer', 'MAX_ASSETS_PER_PEER', Number],
  'max-holders': ['maxHolders', 'MAX_HOLDERS', Number],
  'ping-interval-ms': ['pingIntervalMs', 'PING_INTERVAL_MS', Number],
  'rate-limit-per-second': ['rateLimitPerSecond', 'RATE_LIMIT_PER_SECOND', Number],
  'rate-limit-burst': ['rateLimitBurst', 'RATE_LIMIT_BURST', Number],
  'rate-limit-close-after': ['rateLimitCloseAfter', 'RATE_LIMIT_CLOSE_AFTER', Number],
  'max-holdings': ['maxHoldings', 'MAX_HOLDINGS', Number],
  'max-connections': ['maxConnections', 'MAX_CONNECTIONS', Number],
  'max-connections-per-ip': ['maxConnectionsPerIp', 'MAX_CONNECTIONS_PER_IP', Number],
  'join-deadline-ms': ['joinDeadlineMs', 'JOIN_DEADLINE_MS', Number],
  'limits-by-address': ['limitsByAddress', 'LIMITS_BY_ADDRESS', parseBoolean],
  'http-timeout-ms': ['httpTimeoutMs', 'HTTP_TIMEOUT_MS', Number],
  'max-send-buffer-bytes': ['maxSendBufferBytes', 'MAX_SEND_BUFFER_BYTES', Number],
  'allowed-origins': ['allowedOrigins', 'ALLOWED_ORIGINS', parseList],
  'token-secrets': ['tokenSecrets', 'TOKEN_SECRETS', parseList],
  'token-renew-seconds': ['tokenRenewSeconds', 'TOKEN_RENEW_SECONDS', Number],
  'introduction-ttl-ms': ['introductionTtlMs', 'INTRODUCTION_TTL_MS', Number],
  'introduction-signal-bytes': ['introductionSignalBytes', 'INTRODUCTION_SIGNAL_BYTES', Number],
  'max-introductions': ['maxIntroductions', 'MAX_INTRODUCTIONS', Number],
  'new-holder-burst': ['newHolderBurst', 'NEW_HOLDER_BURST', Number],
  'new-holders-per-second': ['newHoldersPerSecond', 'NEW_HOLDERS_PER_SECOND', Number],
  'report-threshold': ['reportThreshold', 'REPORT_THRESHOLD', Number],
  'report-window-ms': ['reportWindowMs', 'REPORT_WINDOW_MS', Number],
  'quarantine-ms': ['quarantineMs', 'QUARANTINE_MS', Number],
  'pair-within-network': ['pairWithinNetwork', 'PAIR_WITHIN_NETWORK', parseBoolean],
  'usage-flush-ms': ['usageFlushMs', 'USAGE_FLUSH_MS', Number],
  'usage-history-ms': ['usageHistoryMs', 'USAGE_HISTORY_MS', Number],
  'max-usage-sites': ['maxUsageSites', 'MAX_USAGE_SITES', Number],
  'log-level': ['logLevel', 'LOG_LEVEL', String],
  'log-ips': ['logIps', 'LOG_IPS', parseBoolean]
})

/**
 * @param {string} text `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`
 * @returns {boolean}
 */
function parseBoolean (text) {
  const value = text.trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(value)) return true
  if (['0', 'false', 'no', 'off'].includes(value)) return false
  throw new TypeError(`must be true or false (or 1/0, yes/no, on/off), got ${JSON.stringify(text)}`)
}

/**
 * @param {string} text items separated by commas (and any spaces around them)
 * @returns {string[]}
 */
function parseList (text) {
  return text.split(',').map((item) => item.trim()).filter(Boolean)
}

/**
 * @param {string} text `stun:host:port[,turn:…]` or a JSON array of RTCIceServer
 * @returns {object[]}
 */
function parseIceServers (text) {
  if (!text.trim().startsWith('[')) return text.split(',').map((urls) => ({ urls: urls.trim() }))
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new TypeError(`must be stun:host:port[,…] or a JSON array of RTCIceServer; its JSON does not parse (${/** @type {Error} */ (err).message})`)
  }
}

/**
 * A number as people write it (`-1`, `3000`, `1e4`; not `0x10`, not empty).
 * Whether it is a whole number in range, resolveConfig says.
 * @param {string} text
 * @param {string} option which option, for the range the message quotes
 * @returns {number}
 */
export function parseNumber (text, option) {
  if (/^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(text)) return Number(text)
  const range = /** @type {Record<string, readonly [number, number]>} */ (INTEGER_RANGES)[option]
  throw new TypeError(`must be ${range ? `an integer from ${range[0]} to ${range[1]}` : 'a number'}, got ${JSON.stringify(text)}`)
}

/** flag → parseArgs' spec, --help among them */
const FLAG_SPECS = Object.freeze({
  ...Object.fromEntries(Object.keys(OPTIONS).map((flag) => [flag, { type: /** @type {const} */ ('string') }])),
  help: { type: /** @type {const} */ ('boolean'), short: 'h' }
})

/** option → its flag */
const FLAG_OF = new Map(Object.entries(OPTIONS).map(([flag, [option]]) => [option, flag]))

/**
 * The options the command line and the environment give, and how the user
 * named each: the flag (`--port`) or the environment variable (`PORT`).
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 * @returns {{ options: Partial<typeof import('./config.js').DEFAULTS>, nameOf: (option: string) => string }}
 *   `nameOf`: for resolveConfig's messages; an option not given is named by its flag
 * @throws {MayghError} MGH_CLI_ERR_BAD_FLAG, MGH_CLI_ERR_BAD_VALUE
 */
export function readOptions (argv, env) {
  const { tokens } = parseArgs({ args: argv, options: FLAG_SPECS, strict: false, allowPositionals: true, tokens: true })
  const { values } = readArgs(/** @type {import('../../protocol/cli-args.js').ArgToken[]} */ (tokens), FLAG_SPECS)
  /** @type {Record<string, unknown>} */
  const options = {}
  /** @type {Map<string, string>} */
  const names = new Map()
  for (const [flag, [option, envVar, parse]] of Object.entries(OPTIONS)) {
    const fromFlag = values[flag] !== undefined
    const text = fromFlag ? /** @type {string} */ (values[flag]) : env[envVar]
    if (text === undefined || text === '') continue
    const name = fromFlag ? `--${flag}` : envVar
    names.set(option, name)
    try {
      options[option] = parse === Number ? parseNumber(text, option) : parse(text)
    } catch (err) {
      throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_BAD_VALUE, `${name} ${/** @type {Error} */ (err).message}`)
    }
  }
  const nameOf = (/** @type {string} */ option) => names.get(option) ?? (FLAG_OF.has(option) ? `--${FLAG_OF.get(option)}` : JSON.stringify(option))
  return { options, nameOf }
}

/**
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 * @returns {Partial<typeof import('./config.js').DEFAULTS>}
 * @throws {MayghError} as {@link readOptions}
 */
export function optionsFrom (argv, env) {
  return readOptions(argv, env).options
}
