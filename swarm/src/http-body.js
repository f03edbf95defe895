/**
 * The static-server side of the replay origin's responses: conditional
 * requests (If-None-Match → 304), byte ranges (one range → 206 with
 * Content-Range; If-Range; 416 when unsatisfiable; several ranges are
 * answered with the whole body, which RFC 9110 §14.2 allows). Bodies are
 * written by common/distant-link.js's DistantLink, which counts them as the
 * socket takes them.
 */

/**
 * Whether an If-None-Match header names `etag` (weak comparison, RFC 9110 §13.1.2).
 * @param {string | undefined} header
 * @param {string} etag quoted
 * @returns {boolean}
 */
export function etagMatches (header, etag) {
  if (header === undefined) return false
  return header.split(',').some((t) => t.trim() === '*' || t.trim().replace(/^W\//, '') === etag)
}

/**
 * The part of a body a request asks for.
 * @param {import('node:http').IncomingHttpHeaders} headers the request's
 * @param {number} size the whole body's length
 * @param {string} etag the body's (quoted) ETag, for If-Range
 * @returns {{ start: number, end: number } | 'whole' | 'unsatisfiable'} `end` exclusive
 */
export function requestedRange (headers, size, etag) {
  const header = headers.range
  if (header === undefined || size === 0) return 'whole'
  if (headers['if-range'] !== undefined && headers['if-range'] !== etag) return 'whole'
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header)
  if (!m || (m[1] === '' && m[2] === '')) return 'whole' // several ranges, or not bytes=: ignore it
  if (m[1] === '') {
    const suffix = Number(m[2])
    return suffix === 0 ? 'unsatisfiable' : { start: Math.max(0, size - suffix), end: size }
  }
  const start = Number(m[1])
  if (m[2] !== '' && Number(m[2]) < start) return 'whole' // invalid: RFC 9110 §14.1.1 says ignore
  if (start >= size) return 'unsatisfiable'
  return { start, end: m[2] === '' ? size : Math.min(Number(m[2]), size - 1) + 1 }
}
