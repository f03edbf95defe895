/**
 * Client-side error codes. Each failed step of a load carries one in
 * `err.code`; `error` and `reject` events report it. Listed in README
 * ("Error codes") with the coordinator's.
 */
export const CODES = Object.freeze({
  MGH_ERR_OFFLINE: 'not connected to a coordinator',
  MGH_ERR_REQUEST_TIMEOUT: 'the coordinator did not answer in time',
  MGH_ERR_CONNECT_TIMEOUT: 'peer connection did not open in time',
  MGH_ERR_CONNECT_FAILED: 'peer connection failed',
  MGH_ERR_CHANNEL_CLOSED: 'peer channel closed',
  MGH_ERR_STALL: 'peer sent no bytes for too long',
  MGH_ERR_MISS: 'peer does not hold the asset',
  MGH_ERR_PEER_PROTOCOL: 'peer broke the data-channel protocol',
  MGH_ERR_HASH_MISMATCH: 'bytes do not match their SHA-256 name',
  MGH_ERR_ORIGIN: 'origin fetch failed'
})

/**
 * @param {keyof typeof CODES} code
 * @param {string} [detail]
 * @returns {Error & { code: string }}
 */
export function codedError (code, detail) {
  const err = /** @type {Error & { code: string }} */ (new Error(detail ? `${CODES[code]}: ${detail}` : CODES[code]))
  err.code = code
  return err
}
