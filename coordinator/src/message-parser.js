/**
 * Parses the frames clients send (docs/protocol.md; the constants are the
 * wire contract's, in protocol/) and checks their envelope: size, JSON, an
 * object with a known `type`, `ref` and `v`. Each type's own fields are checked
 * by the `validate` beside its handler (handlers/*.js), found in the one table
 * of types, HANDLERS. Every way a frame can be wrong ends in a
 * {@link MayghError} with a stable code; nothing here throws anything else.
 */
import { ERRORS, MayghError, PROTOCOL_VERSION, PROTOCOL_VERSIONS } from '../../protocol/index.js'
import { HANDLERS } from './handlers/index.js'
import { badField } from './fields.js'

/**
 * @typedef {{ maxMessageBytes: number, maxAssetsPerMessage: number }} ParseLimits
 * @typedef {{ type: string, ref?: number, [field: string]: unknown }} Message
 * @typedef {Record<string, unknown>} Fields a decoded JSON object, before its fields are checked
 */

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
    // toString() with no argument is utf8, without looking the encoding up
    message = JSON.parse(data.toString())
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
 * Validate an already-decoded message: its envelope here, its fields by its type's `validate`.
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
  const handler = Object.hasOwn(HANDLERS, m.type) ? HANDLERS[m.type] : undefined
  if (handler === undefined) throw new MayghError(ERRORS.MGH_ERR_UNKNOWN_TYPE, JSON.stringify(m.type.slice(0, 64)))
  handler.validate(m, limits)
  return /** @type {Message} */ (m)
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
