/**
 * HTTP range requests, as a `<video>` or `<audio>` element makes them (RFC
 * 9110 §14): one range of bytes is answered 206 with its `Content-Range`, a
 * range that starts past the end 416. Several ranges in one request are not
 * answered here (the worker leaves them to the network).
 */

/**
 * The one byte range a `Range` header asks of `size` bytes.
 * @param {string} header
 * @param {number} size
 * @returns {{ start: number, end: number } | 'unsatisfiable' | null} inclusive bytes; null: not one
 *   range of bytes this understands
 */
export function parseRange (header, size) {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!m || (m[1] === '' && m[2] === '')) return null
  if (m[1] === '') {
    // The last N bytes.
    const n = Number(m[2])
    return n === 0 || size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - n), end: size - 1 }
  }
  const start = Number(m[1])
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
  if (m[2] !== '' && Number(m[2]) < start) return null
  return start >= size ? 'unsatisfiable' : { start, end }
}

/**
 * The response to a range request for `size` bytes of `type`.
 * @param {{ start: number, end: number } | 'unsatisfiable'} range
 * @param {number} size
 * @param {string} type
 * @param {Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>} [body] the range's bytes
 * @returns {Response}
 */
export function rangeResponse (range, size, type, body) {
  if (range === 'unsatisfiable' || !body) return new Response(null, { status: 416, headers: { 'content-range': `bytes */${size}` } })
  return new Response(body, {
    status: 206,
    headers: {
      'content-type': type,
      'content-length': String(range.end + 1 - range.start),
      'content-range': `bytes ${range.start}-${range.end}/${size}`,
      'accept-ranges': 'bytes'
    }
  })
}
