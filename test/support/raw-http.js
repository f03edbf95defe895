/**
 * One HTTP request sent as given (node:http with options, not a URL: fetch and
 * URL strings would normalise a path such as `/../x`), its whole response read.
 */
import { request } from 'node:http'

/**
 * @param {number} port on 127.0.0.1
 * @param {string} method
 * @param {string} path the request target, sent as it is
 * @param {Record<string, string>} [headers]
 * @returns {Promise<{ status: number, headers: import('node:http').IncomingHttpHeaders, body: Buffer }>}
 */
export function rawRequest (port, method, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      const chunks = /** @type {Buffer[]} */ ([])
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    req.on('error', reject)
    req.end()
  })
}
