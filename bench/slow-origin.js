/**
 * A distant origin for benchmarks: an HTTP proxy in front of a local site that
 * adds a round-trip delay to every response (two on a connection's first
 * request, for the TCP handshake) and sends each body no faster than a given
 * rate (per response, which over HTTP/1.1 is per connection). netem is not
 * available here (shared/TEST-ENV.md), so the delay is emulated in process.
 * HTML bodies can be rewritten on the way (`html`, given the body and the
 * request's URL), so one site serves pages with and without the client.
 */
import { createServer } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'

/** Request headers a browser sends that are the proxy's own business, not the site's. */
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection'])
/** Bytes sent per write while pacing. */
const CHUNK = 8192

/**
 * @param {object} o
 * @param {string} o.target the site's base URL (`http://127.0.0.1:8080`)
 * @param {number} o.rttMs added round trip
 * @param {number} o.mbps per-response bandwidth, Mbit/s
 * @returns {Promise<{ url: string, html: ((html: string, url: URL) => string) | null, close: () => Promise<void> }>}
 *   set `html` to rewrite the site's HTML responses
 */
export async function startSlowOrigin ({ target, rttMs, mbps }) {
  const bytesPerMs = mbps * 1e6 / 8 / 1000
  /** @type {WeakSet<import('node:net').Socket>} */
  const used = new WeakSet()
  const proxy = {
    url: '',
    /** @type {((html: string, url: URL) => string) | null} */
    html: null,
    close: () => new Promise((resolve) => {
      server.close(() => resolve(undefined))
      server.closeAllConnections()
    })
  }
  const server = createServer(async (req, res) => {
    const handshake = used.has(req.socket) ? 0 : rttMs
    used.add(req.socket)
    try {
      /** @type {Record<string, string>} */
      const headers = {}
      for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && typeof v === 'string') headers[k] = v
      const [upstream] = await Promise.all([
        fetch(target + req.url, { method: req.method, headers, redirect: 'manual' }),
        sleep(handshake + rttMs)
      ])
      /** @type {Buffer} */
      let body = Buffer.from(await upstream.arrayBuffer())
      const type = upstream.headers.get('content-type') ?? ''
      if (proxy.html && type.startsWith('text/html')) body = Buffer.from(proxy.html(body.toString('utf8'), new URL(req.url ?? '/', proxy.url)))
      const out = Object.fromEntries([...upstream.headers].filter(([k]) => k !== 'content-length' && k !== 'content-encoding' && k !== 'transfer-encoding'))
      res.writeHead(upstream.status, upstream.status === 304 || upstream.status === 204 ? out : { ...out, 'content-length': body.length })
      if (req.method === 'HEAD' || upstream.status === 304 || upstream.status === 204) return res.end()
      const start = performance.now()
      for (let sent = 0; sent < body.length; sent += CHUNK) {
        const chunk = body.subarray(sent, sent + CHUNK)
        const due = start + (sent + chunk.length) / bytesPerMs
        const wait = due - performance.now()
        if (wait > 1) await sleep(wait)
        if (res.destroyed) return
        res.write(chunk)
      }
      res.end()
    } catch {
      if (!res.headersSent) res.writeHead(502)
      res.end()
    }
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  proxy.url = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`
  return proxy
}
