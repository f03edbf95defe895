/**
 * STUN message encoding and decoding (RFC 5389), just enough for a Binding
 * responder: header checks, attribute walk, XOR-MAPPED-ADDRESS, ERROR-CODE,
 * UNKNOWN-ATTRIBUTES and FINGERPRINT. Pure functions over Buffers; decoding
 * never throws on bad input, it returns a reason instead.
 */
import { isIPv4, isIPv6 } from 'node:net'
import { crc32 } from 'node:zlib'

export const MAGIC_COOKIE = 0x2112a442
export const FINGERPRINT_XOR = 0x5354554e
export const HEADER_BYTES = 20

/** Message types (method + class) this module speaks. */
export const MESSAGE_TYPES = Object.freeze({
  BINDING_REQUEST: 0x0001,
  BINDING_SUCCESS: 0x0101,
  BINDING_ERROR: 0x0111
})

/** Attribute types. Below 0x8000 is comprehension-required, above is optional. */
export const ATTRIBUTES = Object.freeze({
  MAPPED_ADDRESS: 0x0001,
  USERNAME: 0x0006,
  MESSAGE_INTEGRITY: 0x0008,
  ERROR_CODE: 0x0009,
  UNKNOWN_ATTRIBUTES: 0x000a,
  REALM: 0x0014,
  NONCE: 0x0015,
  XOR_MAPPED_ADDRESS: 0x0020,
  PRIORITY: 0x0024, // ICE (RFC 8445): understood, irrelevant to a server
  USE_CANDIDATE: 0x0025, // ICE
  SOFTWARE: 0x8022,
  FINGERPRINT: 0x8028
})

/** @type {Set<number>} */
const KNOWN_REQUIRED = new Set(Object.values(ATTRIBUTES).filter((t) => t < 0x8000))

/**
 * STUN class of a message type: 0 request, 1 indication, 2 success, 3 error.
 * @param {number} type 14-bit message type
 * @returns {number}
 */
export function messageClass (type) {
  return ((type >> 7) & 0x2) | ((type >> 4) & 0x1)
}

/**
 * STUN method of a message type (1 = Binding).
 * @param {number} type
 * @returns {number}
 */
export function messageMethod (type) {
  return (type & 0x000f) | ((type & 0x00e0) >> 1) | ((type & 0x3e00) >> 2)
}

/**
 * @typedef {{ type: number, value: Buffer }} StunAttribute
 * @typedef {{ type: number, transactionId: Buffer, attributes: StunAttribute[] }} StunMessage
 */

/**
 * Decode and validate one datagram.
 *
 * @param {Buffer} buf
 * @returns {{ message: StunMessage } | { reason: string }}
 */
export function decodeMessage (buf) {
  if (buf.length < HEADER_BYTES) return { reason: 'short' }
  const type = buf.readUInt16BE(0)
  if ((type & 0xc000) !== 0) return { reason: 'top-bits' }
  const length = buf.readUInt16BE(2)
  if (length % 4 !== 0 || length !== buf.length - HEADER_BYTES) return { reason: 'bad-length' }
  if (buf.readUInt32BE(4) !== MAGIC_COOKIE) return { reason: 'cookie' }
  /** @type {StunAttribute[]} */
  const attributes = []
  let offset = HEADER_BYTES
  let afterIntegrity = false
  while (offset < buf.length) {
    if (offset + 4 > buf.length) return { reason: 'attribute-header' }
    const attrType = buf.readUInt16BE(offset)
    const attrLength = buf.readUInt16BE(offset + 2)
    const end = offset + 4 + attrLength
    if (end > buf.length) return { reason: 'attribute-overflow' }
    if (attrType === ATTRIBUTES.FINGERPRINT) {
      if (end !== buf.length || attrLength !== 4) return { reason: 'fingerprint-position' }
      if (buf.readUInt32BE(offset + 4) !== fingerprintOf(buf.subarray(0, offset))) return { reason: 'fingerprint-mismatch' }
    } else if (!afterIntegrity) {
      // RFC 5389 §15.4: everything after MESSAGE-INTEGRITY except FINGERPRINT is ignored.
      attributes.push({ type: attrType, value: buf.subarray(offset + 4, end) })
    }
    if (attrType === ATTRIBUTES.MESSAGE_INTEGRITY) afterIntegrity = true
    offset = end + ((4 - (attrLength % 4)) % 4)
  }
  return { message: { type, transactionId: buf.subarray(8, 20), attributes } }
}

/**
 * Comprehension-required attribute types in `message` that this module does not know.
 * @param {StunMessage} message
 * @returns {number[]}
 */
export function unknownRequiredAttributes (message) {
  return message.attributes.map((a) => a.type).filter((t) => t < 0x8000 && !KNOWN_REQUIRED.has(t))
}

/**
 * Encode a message; FINGERPRINT is appended last.
 *
 * @param {number} type
 * @param {Buffer} transactionId 12 bytes
 * @param {StunAttribute[]} attributes
 * @returns {Buffer}
 */
export function encodeMessage (type, transactionId, attributes) {
  const parts = []
  for (const { type: attrType, value } of attributes) {
    const head = Buffer.alloc(4)
    head.writeUInt16BE(attrType, 0)
    head.writeUInt16BE(value.length, 2)
    parts.push(head, value, Buffer.alloc((4 - (value.length % 4)) % 4))
  }
  const body = Buffer.concat(parts)
  const out = Buffer.alloc(HEADER_BYTES + body.length + 8)
  out.writeUInt16BE(type, 0)
  out.writeUInt16BE(body.length + 8, 2) // the length already counts FINGERPRINT when it is computed
  out.writeUInt32BE(MAGIC_COOKIE, 4)
  transactionId.copy(out, 8)
  body.copy(out, HEADER_BYTES)
  const at = HEADER_BYTES + body.length
  out.writeUInt16BE(ATTRIBUTES.FINGERPRINT, at)
  out.writeUInt16BE(4, at + 2)
  out.writeUInt32BE(fingerprintOf(out.subarray(0, at)), at + 4)
  return out
}

/**
 * FINGERPRINT value of the message bytes that precede the attribute.
 * @param {Buffer} bytes
 * @returns {number}
 */
export function fingerprintOf (bytes) {
  return (crc32(bytes) ^ FINGERPRINT_XOR) >>> 0
}

/**
 * XOR-MAPPED-ADDRESS value for a transport address (IPv4-mapped IPv6 is sent as IPv4).
 *
 * @param {string} address
 * @param {number} port
 * @param {Buffer} transactionId
 * @returns {Buffer}
 */
export function encodeXorAddress (address, port, transactionId) {
  const plain = address.split('%')[0].replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '')
  const ip = isIPv4(plain) ? Buffer.from(plain.split('.').map(Number)) : ipv6Bytes(plain)
  const value = Buffer.alloc(4 + ip.length)
  value.writeUInt8(ip.length === 4 ? 0x01 : 0x02, 1)
  value.writeUInt16BE(port ^ (MAGIC_COOKIE >>> 16), 2)
  const mask = xorMask(transactionId)
  for (let i = 0; i < ip.length; i++) value[4 + i] = ip[i] ^ mask[i]
  return value
}

/**
 * Decode an XOR-MAPPED-ADDRESS value (clients and tests use this).
 *
 * @param {Buffer} value
 * @param {Buffer} transactionId
 * @returns {{ family: 'IPv4' | 'IPv6', address: string, port: number }}
 */
export function decodeXorAddress (value, transactionId) {
  const family = value[1] === 0x01 ? 'IPv4' : 'IPv6'
  const size = family === 'IPv4' ? 4 : 16
  if (value.length !== 4 + size) throw new RangeError('bad XOR-MAPPED-ADDRESS length')
  const mask = xorMask(transactionId)
  const ip = Buffer.alloc(size)
  for (let i = 0; i < size; i++) ip[i] = value[4 + i] ^ mask[i]
  const port = value.readUInt16BE(2) ^ (MAGIC_COOKIE >>> 16)
  if (family === 'IPv4') return { family, address: [...ip].join('.'), port }
  const groups = []
  for (let i = 0; i < 16; i += 2) groups.push(ip.readUInt16BE(i).toString(16))
  // The URL parser prints the canonical compressed form (RFC 5952).
  return { family, address: new URL(`http://[${groups.join(':')}]`).hostname.slice(1, -1), port }
}

/**
 * The 16-byte XOR mask: magic cookie followed by the transaction id.
 * @param {Buffer} transactionId
 * @returns {Buffer}
 */
function xorMask (transactionId) {
  const mask = Buffer.alloc(16)
  mask.writeUInt32BE(MAGIC_COOKIE, 0)
  transactionId.copy(mask, 4)
  return mask
}

/**
 * 16 bytes of an IPv6 address in text form (with `::` and an optional dotted IPv4 tail).
 * @param {string} text
 * @returns {Buffer}
 */
function ipv6Bytes (text) {
  if (!isIPv6(text)) throw new TypeError(`not an IP address: ${text}`)
  let groups = text
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number)
    groups = text.slice(0, tail.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16)
  }
  const [head, rest] = groups.split('::')
  const left = head ? head.split(':') : []
  const right = rest ? rest.split(':') : []
  const words = rest === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  const out = Buffer.alloc(16)
  words.forEach((w, i) => out.writeUInt16BE(parseInt(w, 16), i * 2))
  return out
}
