/**
 * Checks of a decoded message's fields that more than one message type shares:
 * the coded error a bad field gets, lists of asset names, a relayed signal.
 * The envelope is checked in message-parser.js, each type's own fields beside
 * its handler (handlers/*.js `validate`).
 */
import { ERRORS, LIMITS, MayghError, isSri } from '../../protocol/index.js'

/** @typedef {import('./message-parser.js').Fields} Fields */

/** How deep a relayed signal may nest (an SDP offer or ICE candidate is 2 or 3 deep). */
export const MAX_SIGNAL_DEPTH = 8

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
    if (!isSri(hash)) throw badField(field, 'an array of SRI sha256 strings')
  }
}

/**
 * The assets a `lookup` or a `held` check asks about (`hashes`): 1 to maxLookupHashes names.
 * @param {Fields} m
 * @throws {MayghError} MGH_ERR_BAD_FIELD
 */
export function lookupHashes (m) {
  const max = LIMITS.maxLookupHashes
  if (!Array.isArray(m.hashes) || m.hashes.length === 0 || m.hashes.length > max || !m.hashes.every(isSri)) throw badField('hashes', `an array of 1 to ${max} SRI sha256 strings`)
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
