/**
 * A STUN Binding responder (RFC 5389 §7.3, §10): tells each client the transport
 * address its request came from, which is all WebRTC needs to gather server-
 * reflexive candidates. On loopback, Chromium gathers candidates only through a
 * local STUN server, so the coordinator hands this one's URL out in `welcome`.
 *
 * It never replies to anything that is not a well-formed STUN Binding request
 * (no amplification of stray traffic) and never throws on input: bad datagrams
 * are dropped and counted as `malformed`.
 */
import { createSocket } from 'node:dgram'
import { isIPv6 } from 'node:net'
import {
  ATTRIBUTES, MESSAGE_TYPES, decodeMessage, encodeMessage, encodeXorAddress,
  messageClass, messageMethod, unknownRequiredAttributes
} from './stun-message.js'

/** Defaults for {@link startStunServer}. */
const defaults = {
  /** UDP port; 0 picks a free one */
  port: 3478,
  /** address to bind; an IPv6 literal makes it a udp6 socket */
  host: '127.0.0.1',
  /** SOFTWARE attribute sent in every response */
  software: 'maygh-stun/1'
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
export const STUN_DEFAULTS = Object.freeze(defaults)

const BINDING = 0x001
const CLASS_REQUEST = 0

/**
 * @typedef {{ requests: number, responses: number, malformed: number }} StunStats
 * @typedef {{
 *   port: number, address: string, url: string,
 *   stats: () => StunStats, close: () => Promise<void>
 * }} StunServer
 */

/**
 * Start a STUN Binding responder.
 *
 * @param {{ port?: number, host?: string, software?: string }} [options]
 * @returns {Promise<StunServer>} resolves once the socket is bound
 */
export async function startStunServer (options = {}) {
  const config = resolveOptions(options)
  const socket = createSocket({ type: isIPv6(config.host) ? 'udp6' : 'udp4' })
  const software = Buffer.from(config.software, 'utf8')
  const counts = { requests: 0, responses: 0, malformed: 0 }

  socket.on('message', (msg, rinfo) => {
    let reply
    try {
      reply = answer(msg, rinfo, software, counts)
    } catch {
      reply = undefined // unreachable by design; a responder must not die on a datagram
      counts.malformed++
    }
    if (reply === undefined) return
    counts.responses++
    // Send failures (e.g. port 0 as source) are the client's problem, not ours.
    socket.send(reply, rinfo.port, rinfo.address, () => {})
  })

  await new Promise((resolve, reject) => {
    socket.once('error', reject)
    socket.bind(config.port, config.host, () => {
      socket.off('error', reject)
      resolve(undefined)
    })
  })
  // After binding, socket errors (ICMP unreachable on some platforms) are not fatal.
  socket.on('error', () => {})

  const { address, port } = socket.address()
  let closed
  return {
    port,
    address,
    url: `stun:${isIPv6(address) ? `[${address}]` : address}:${port}`,
    stats: () => ({ ...counts }),
    close () {
      closed ??= new Promise((resolve) => socket.close(() => resolve(undefined)))
      return closed
    }
  }
}

/**
 * The response to one datagram, or undefined to stay silent (after counting it).
 *
 * @param {Buffer} msg
 * @param {import('node:dgram').RemoteInfo} rinfo
 * @param {Buffer} software
 * @param {StunStats} counts mutated
 * @returns {Buffer | undefined}
 */
function answer (msg, rinfo, software, counts) {
  const decoded = decodeMessage(msg)
  if (!('message' in decoded)) {
    counts.malformed++
    return undefined
  }
  const { type, transactionId } = decoded.message
  // Indications, responses and requests for methods other than Binding get no answer.
  if (messageClass(type) !== CLASS_REQUEST || messageMethod(type) !== BINDING) {
    counts.malformed++
    return undefined
  }
  counts.requests++
  const soft = { type: ATTRIBUTES.SOFTWARE, value: software }
  const unknown = unknownRequiredAttributes(decoded.message)
  if (unknown.length > 0) {
    // RFC 5389 §7.3.1: 420 Unknown Attribute, listing what we did not understand.
    const list = Buffer.alloc(unknown.length * 2)
    unknown.forEach((t, i) => list.writeUInt16BE(t, i * 2))
    return encodeMessage(MESSAGE_TYPES.BINDING_ERROR, transactionId, [
      { type: ATTRIBUTES.ERROR_CODE, value: errorCodeValue(420, 'Unknown Attribute') },
      { type: ATTRIBUTES.UNKNOWN_ATTRIBUTES, value: list },
      soft
    ])
  }
  return encodeMessage(MESSAGE_TYPES.BINDING_SUCCESS, transactionId, [
    { type: ATTRIBUTES.XOR_MAPPED_ADDRESS, value: encodeXorAddress(rinfo.address, rinfo.port, transactionId) },
    soft
  ])
}

/**
 * ERROR-CODE attribute value (RFC 5389 §15.6).
 * @param {number} code 300–699
 * @param {string} reason
 * @returns {Buffer}
 */
function errorCodeValue (code, reason) {
  const value = Buffer.concat([Buffer.alloc(4), Buffer.from(reason, 'utf8')])
  value[2] = Math.floor(code / 100)
  value[3] = code % 100
  return value
}

/**
 * Merge options over the defaults and validate them.
 * @param {{ port?: number, host?: string, software?: string }} options
 * @returns {typeof STUN_DEFAULTS}
 */
function resolveOptions (options) {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined))
  const config = { ...STUN_DEFAULTS, ...defined }
  if (!Number.isInteger(config.port) || config.port < 0 || config.port > 65535) {
    throw new TypeError('port must be an integer from 0 to 65535')
  }
  if (typeof config.host !== 'string' || config.host === '') throw new TypeError('host must be a non-empty string')
  if (typeof config.software !== 'string' || Buffer.byteLength(config.software) > 763) {
    throw new TypeError('software must be a string of at most 763 bytes') // RFC 5389 §15.10
  }
  return Object.freeze(config)
}
