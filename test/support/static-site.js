/**
 * An ordinary static file server, as a site owner would put in front of a
 * folder (nginx, `npx serve`): files with their content type, an ETag,
 * `Cache-Control: no-cache` (revalidate, 304 when unchanged), `index.html`
 * for folders, 404 otherwise, and one byte range when asked (206, as nginx
 * answers a `<video>`). It counts what it serves per path, as an origin's
 * logs would: requests, 304s and body bytes.
 */
import { createServer } from 'node:http'
import { readFile, stat } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import { join, normalize, sep } from 'node:path'
import { contentType } from '../../client/manifest.js'

/**
 * @param {string} root folder to serve
 * @returns {Promise<{ url: string, served: Map<string, { requests: number, bytes: number }>, bytesUnder: (prefix: string) => number, close: () => Promise<void> }>}
 */
export async function startStaticSite (root) {
  /** @type {Map<string, { requests: number, bytes: number }>} */
  const served = new Map()
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)
    const count = served.get(path) ?? { requests: 0, bytes: 0 }
    served.set(path, count)
    count.requests++
    let file = normalize(join(root, path))
    if (!file.startsWith(normalize(root + sep)) && file !== normalize(root)) return res.writeHead(400).end()
    try {
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html')
      const body = await readFile(file)
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`
      const headers = { 'content-type': contentType(file), etag, 'cache-control': 'no-cache' }
      if (req.headers['if-none-match'] === etag) return res.writeHead(304, headers).end()
      const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''))
      if (range && Number(range[1]) < body.length) {
        const start = Number(range[1])
        const end = Math.min(body.length - 1, range[2] === '' ? Infinity : Number(range[2]))
        count.bytes += end + 1 - start
        return res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${body.length}`, 'content-length': end + 1 - start }).end(body.subarray(start, end + 1))
      }
      count.bytes += body.length
      res.writeHead(200, { ...headers, 'accept-ranges': 'bytes', 'content-length': body.length }).end(body)
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
    }
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  return {
    url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`,
    served,
    bytesUnder: (prefix) => [...served].reduce((n, [p, c]) => n + (p.startsWith(prefix) ? c.bytes : 0), 0),
    close: () => new Promise((resolve) => {
      server.close(() => resolve(undefined))
      server.closeAllConnections()
    })
  }
}
