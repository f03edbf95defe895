/**
 * Parses and validates the messages clients send (docs/protocol.md; the
 * constants are the wire contract's, in protocol/). Every way a frame can be
 * wrong ends in a {@link MayghError} with a stable code; nothing here throws
 * anything else.
 */
import { ERRORS, LIMITS, MAX_USAGE_BYTES, MayghError, PEER_ID_PATTERN, PROTOCOL_VERSION, PROTOCOL_VERSIONS, REPORT_REASONS, REQUEST_TYPES, USAGE_SOURCES, VISITOR_KEY_PATTERN, isSri } from '../../protocol/index.js'
import { MAX_TOKEN_LENGTH } from './join-token.js'

const MAX_CONNECTED = LIMITS.maxConnected

/**
 * @typedef {{ maxMessageBytes: number, maxAssetsPerMessage: number }} ParseLimits
 * @typedef {{ type: string, ref?: number, [field: string]: unknown }} Message
 * @typedef {Record<string, unknown>} Fields a decoded JSON object, before its fields are checked
 */

/** Field validators by message type; a type missing here is unknown. */
const VALIDATORS = {
  /** @param {Fields} m @param {ParseLimits} l */
  join: (m, l) => {
    optionalHashList(m, 'have', l.maxAssetsPerMessage)
    if (m.token !== undefined && (typeof m.token !== 'string' || m.token.length > MAX_TOKEN_LENGTH)) throw badField('token', `a string of at most ${MAX_TOKEN_LENGTH} characters`)
    if (m.visitor !== undefined && (typeof m.visitor !== 'string' || !VISITOR_KEY_PATTERN.test(m.visitor))) throw badField('visitor', '16-64 of [A-Za-z0-9_-]')
  },
  /** @param {Fields} m @param {ParseLimits} l */
  update: (m, l) => {
    optionalHashList(m, 'add', l.maxAssetsPerMessage)
    optionalHashList(m, 'remove', l.maxAssetsPerMessage)
    if (m.serving !== undefined && typeof m.serving !== 'boolean') throw badField('serving', 'a boolean')
  },
  /** @param {Fields} m */
  lookup: (m) => {
    if (m.hashes === undefined) {
      if (!isSri(m.hash)) throw badField('hash', 'an SRI sha256 string')
    } else {
      const max = LIMITS.maxLookupHashes
      if (m.hash !== undefined) throw badField('hashes', 'either hash or hashes, not both')
      if (!Array.isArray(m.hashes) || m.hashes.length === 0 || m.hashes.length > max || !m.hashes.every(isSri)) throw badField('hashes', `an array of 1 to ${max} SRI sha256 strings`)
    }
    if (m.connected !== undefined) {
      if (!Array.isArray(m.connected) || m.connected.length > MAX_CONNECTED) throw badField('connected', `an array of at most ${MAX_CONNECTED} peer ids`)
      for (const id of m.connected) if (typeof id !== 'string' || !PEER_ID_PATTERN.test(id)) throw badField('connected', 'peer ids')
    }
    if (m.offers !== undefined) {
      const max = LIMITS.maxLookupOffers
      if (!Array.isArray(m.offers) || m.offers.length > max || !m.offers.every(isOffer)) throw badField('offers', `an array of at most ${max} signals, each with a distinct "cid" (1 to ${MAX_CID_LENGTH} characters) and nested at most ${MAX_SIGNAL_DEPTH} deep`)
      if (new Set(m.offers.map((o) => o.cid)).size !== m.offers.length) throw badField('offers', 'each with a distinct "cid"')
    }
  },
  /** @param {Fields} m */
  connect: (m) => {
    if (typeof m.to !== 'string' || !PEER_ID_PATTERN.test(m.to)) throw badField('to', 'a peer id')
    if (!isSignal(m.signal)) throw badField('signal', `an object nested at most ${MAX_SIGNAL_DEPTH} deep`)
  },
  /** @param {Fields} m */
  report: (m) => {
    if (typeof m.peer !== 'string' || !PEER_ID_PATTERN.test(m.peer)) throw badField('peer', 'a peer id')
    if (!isSri(m.hash)) throw badField('hash', 'an SRI sha256 string')
    if (!REPORT_REASONS.includes(/** @type {any} */ (m.reason))) throw badField('reason', `one of ${REPORT_REASONS.join(', ')}`)
  },
  /** @param {Fields} m */
  usage: (m) => {
    for (const source of USAGE_SOURCES) if (m[source] !== undefined && !isByteCount(m[source])) throw badField(source, `an integer from 0 to ${MAX_USAGE_BYTES}`)
    if (m.assets === undefined) return
    if (!Array.isArray(m.assets) || m.assets.length > LIMITS.maxUsageAssets) throw badField('assets', `an array of at most ${LIMITS.maxUsageAssets} [path, bytes] pairs`)
    for (const pair of m.assets) {
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || !pair[0].startsWith('/') || pair[0].length > LIMITS.maxUsagePath || !isByteCount(pair[1])) {
        throw badField('assets', `[path, bytes] pairs: a path starting with / of at most ${LIMITS.maxUsagePath} characters, an integer from 0 to ${MAX_USAGE_BYTES}`)
      }
    }
  }
}

/** @param {unknown} n @returns {n is number} */
const isByteCount = (n) => Number.isInteger(n) && /** @type {number} */ (n) >= 0 && /** @type {number} */ (n) <= MAX_USAGE_BYTES

// The validators cover exactly the contract's request types (a test checks the handlers do too).
if (Object.keys(VALIDATORS).join() !== REQUEST_TYPES.join()) throw new Error('message-parser.js: VALIDATORS do not match REQUEST_TYPES')

/**
 * Parse one WebSocket frame into a validated message.
 *
 * @param {Buffer} data frame payload (`ws` with its default binaryType)
 * @param {boolean} isBinary
 * @param {ParseLimits} limits
 * @returns {Message}
 * @throws {MayghError} with `ref` set when the frame was JSON carrying a valid one
 */
export function parseMessage (data, isBinary, limits) {
  if (isBinary) throw new MayghError(ERRORS.MGH_ERR_BAD_MESSAGE, 'binary frames are not part of the protocol')
  if (data.length > limits.maxMessageBytes) throw new MayghError(ERRORS.MGH_ERR_TOO_LARGE, `${data.length} bytes > ${limits.maxMessageBytes}`)
  let message
  try {
    message = JSON.parse(data.toString('utf8'))
  } catch {
    throw new MayghError(ERRORS.MGH_ERR_BAD_JSON)
  }
  try {
    return validateMessage(message, limits)
  } catch (err) {
    // validateMessage throws only MayghErrors; the reply to this one can still name the request
    throw Object.assign(err, { ref: refOf(message) })
  }
}

/**
 * Validate an already-decoded message.
 *
 * @param {unknown} message
 * @param {ParseLimits} limits
 * @returns {Message}
 * @throws {MayghError}
 */
export function validateMessage (message, limits) {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) throw new MayghError(ERRORS.MGH_ERR_BAD_MESSAGE)
  const m = /** @type {Fields} */ (message)
  if (typeof m.type !== 'string') throw new MayghError(ERRORS.MGH_ERR_BAD_MESSAGE)
  if (m.ref !== undefined && refOf(m) === undefined) throw badField('ref', 'a non-negative integer')
  if (m.v !== undefined && !PROTOCOL_VERSIONS.includes(/** @type {any} */ (m.v))) throw new MayghError(ERRORS.MGH_ERR_BAD_VERSION, `got ${describe(m.v)}, this coordinator speaks ${PROTOCOL_VERSIONS.join(', ')} (newest ${PROTOCOL_VERSION})`)
  const validate = Object.hasOwn(VALIDATORS, m.type) ? VALIDATORS[/** @type {keyof typeof VALIDATORS} */ (m.type)] : undefined
  if (validate === undefined) throw new MayghError(ERRORS.MGH_ERR_UNKNOWN_TYPE, JSON.stringify(m.type.slice(0, 64)))
  validate(m, limits)
  return /** @type {Message} */ (m)
}

/** How deep a relayed signal may nest (an SDP offer or ICE candidate is 2 or 3 deep). */
export const MAX_SIGNAL_DEPTH = 8

/** longest `cid` an offer carried by a lookup may have (the client's are 10 characters) */
export const MAX_CID_LENGTH = 32

/** @param {any} o @returns {boolean} a signal with a connection id: what a lookup's `offers` hold */
const isOffer = (o) => isSignal(o) && typeof o.cid === 'string' && o.cid.length > 0 && o.cid.length <= MAX_CID_LENGTH

/**
 * Whether `value` may be relayed as a signal: a plain object nested at most
 * MAX_SIGNAL_DEPTH deep, so that no shard that handles it (this one, or one
 * it reaches over the bus) ever recurses far on it.
 * @param {unknown} value
 * @returns {boolean}
 */
export function isSignal (value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && depthAtMost(value, MAX_SIGNAL_DEPTH)
}

/**
 * @param {unknown} value
 * @param {number} depth levels of objects and arrays allowed, this one included
 * @returns {boolean}
 */
function depthAtMost (value, depth) {
  if (value === null || typeof value !== 'object') return true
  if (depth === 0) return false
  // for…in rather than Object.values: no array per level (a decoded JSON value has no inherited keys)
  for (const key in value) if (!depthAtMost(/** @type {Record<string, unknown>} */ (value)[key], depth - 1)) return false
  return true
}

/**
 * `ref` of a message that failed validation, so its error reply can still be matched.
 *
 * @param {unknown} message
 * @returns {number | undefined}
 */
function refOf (message) {
  const ref = message !== null && typeof message === 'object' ? /** @type {Fields} */ (message).ref : undefined
  return typeof ref === 'number' && Number.isSafeInteger(ref) && ref >= 0 ? ref : undefined
}

/**
 * @param {Fields} m
 * @param {string} field
 * @param {number} max
 */
function optionalHashList (m, field, max) {
  const list = m[field]
  if (list === undefined) return
  if (!Array.isArray(list)) throw badField(field, 'an array of SRI sha256 strings')
  if (list.length > max) throw new MayghError(ERRORS.MGH_ERR_TOO_MANY_ASSETS, `${field} names ${list.length} assets, at most ${max} per message`)
  for (const hash of list) {
    if (!isSri(hash)) throw badField(field, 'an array of SRI sha256 strings')
  }
}

/**
 * A client's value, named in an error without being stringified whole (it may
 * nest thousands deep, or be 60 KB long): a short number or string as it is, else its type.
 * @param {unknown} value
 * @returns {string}
 */
function describe (value) {
  if (typeof value === 'number') return String(value)
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 32))
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`
}

/**
 * @param {string} field
 * @param {string} expected
 * @returns {MayghError}
 */
function badField (field, expected) {
  return new MayghError(ERRORS.MGH_ERR_BAD_FIELD, `"${field}" must be ${expected}`)
}
