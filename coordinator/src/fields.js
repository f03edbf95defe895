/**
 * Checks of a decoded message's fields that more than one message type shares:
 * the coded error a bad field gets, asset names and peer ids, lists of asset
 * names, a relayed signal. The envelope is checked in message-parser.js, each
 * type's own fields beside its handler (handlers/*.js `validate`).
 */
import { ERRORS, LIMITS, MayghError } from '../../protocol/index.js'

/** @typedef {import('./message-parser.js').Fields} Fields */

/** How deep a relayed signal may nest (an SDP offer or ICE candidate is 2 or 3 deep). */
export const MAX_SIGNAL_DEPTH = 8

/**
 * Character classes of the protocol's names, by char code below 128: bit 1 base64
 * (`[A-Za-z0-9+/]`), bit 2 base64url (`[\w-]`), bit 4 a shard id's (`[\w.-]`).
 */
const CLASSES = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c)
  const alnum = /[A-Za-z0-9]/.test(ch)
  CLASSES[c] = (alnum || ch === '+' || ch === '/' ? 1 : 0) | (alnum || ch === '_' || ch === '-' ? 2 : 0) | (alnum || ch === '_' || ch === '-' || ch === '.' ? 4 : 0)
}

/**
 * @param {string} s
 * @param {number} from
 * @param {number} to
 * @param {number} bit a class of CLASSES
 * @returns {boolean} whether every character of s[from, to) is of that class
 */
function allOf (s, from, to, bit) {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i)
    if (c >= 128 || (CLASSES[c] & bit) === 0) return false
  }
  return true
}

/** What every asset name starts with (SRI_PATTERN). */
const SRI_PREFIX = 'sha256-'

/**
 * Whether `value` is an asset name: SRI_PATTERN's test (protocol/sri.js, the
 * contract), by a loop over its characters, as fields.test.js checks. An asset
 * name is checked once or more per transaction, and the regex took 3-4 % of one
 * (its 51 characters in V8's compiled regex, 3× what this loop takes).
 * @param {unknown} value
 * @returns {value is string}
 */
export function isAssetName (value) {
  return typeof value === 'string' && value.length === 51 && value.startsWith(SRI_PREFIX) &&
    value.charCodeAt(50) === 0x3d && allOf(value, SRI_PREFIX.length, 50, 1)
}

/**
 * Whether `value` is a peer id: PEER_ID_PATTERN's test (protocol/messages.js,
 * the contract), by a loop over its characters as isAssetName is, checked on every
 * relayed signal. A shard's part cannot hold `~`, so the id's one `~` is the
 * 23rd character from its end.
 * @param {unknown} value
 * @returns {value is string}
 */
export function isPeerId (value) {
  if (typeof value !== 'string') return false
  const tilde = value.length - 23
  return tilde >= 1 && tilde <= 64 && value.charCodeAt(tilde) === 0x7e &&
    allOf(value, 0, tilde, 4) && allOf(value, tilde + 1, value.length, 2)
}

/**
 * @param {string} field
 * @param {string} expected
 * @returns {MayghError} MGH_ERR_BAD_FIELD, naming the field and what it must be
 */
export function badField (field, expected) {
  return new MayghError(ERRORS.MGH_ERR_BAD_FIELD, `"${field}" must be ${expected}`)
}

/**
 * A list of asset names, if the message has one under `field`.
 * @param {Fields} m
 * @param {string} field
 * @param {number} max names one message may carry (MGH_ERR_TOO_MANY_ASSETS past it)
 * @throws {MayghError} MGH_ERR_BAD_FIELD, MGH_ERR_TOO_MANY_ASSETS
 */
export function optionalHashList (m, field, max) {
  const list = m[field]
  if (list === undefined) return
  if (!Array.isArray(list)) throw badField(field, 'an array of SRI sha256 strings')
  if (list.length > max) throw new MayghError(ERRORS.MGH_ERR_TOO_MANY_ASSETS, `${field} names ${list.length} assets, at most ${max} per message`)
  for (const hash of list) {
    if (!isAssetName(hash)) throw badField(field, 'an array of SRI sha256 strings')
  }
}

/**
 * The assets a `lookup` or a `held` check asks about (`hashes`): 1 to maxLookupHashes names.
 * @param {Fields} m
 * @throws {MayghError} MGH_ERR_BAD_FIELD
 */
export function lookupHashes (m) {
  const max = LIMITS.maxLookupHashes
  if (!Array.isArray(m.hashes) || m.hashes.length === 0 || m.hashes.length > max || !m.hashes.every(isAssetName)) throw badField('hashes', `an array of 1 to ${max} SRI sha256 strings`)
}

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
