/**
 * A distant origin for benchmarks: an HTTP proxy that puts the delay rules of
 * a link to a faraway server (common/distant-link.js `DistantLink`: a round
 * trip before each response's head, two on a connection's first request,
 * then the body no faster than a given rate per response) in front of a
 * local site. HTML bodies can be rewritten on the way (`html`, given the body and the
 * request's URL), so one site serves pages with and without the client.
 * The proxy counts the body bytes it sent (`sent`, by media type), so a
 * benchmark counts the origin's bytes at the origin, not in its clients.
 */
import { createServer } from 'node:http'
import { DistantLink } from '../common/distant-link.js'

/** Request headers a browser sends that are the proxy's own business, not the site's. */
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection'])

/**
 * @param {object} o
 * @param {string} o.target the site's base URL (`http://127.0.0.1:8080`)
 * @param {number} o.rttMs added round trip
 * @param {number} o.mbps per-response bandwidth, Mbit/s
 * @returns {Promise<{ url: string, html: ((html: string, url: URL) => string) | null, sent: Record<string, number>, active: number, link: DistantLink, close: () => Promise<void> }>}
 *   set `html` to rewrite the site's HTML responses; `sent`: response body bytes the sockets
 *   took (see `DistantLink.send`: a response cut short counts as far as it went), by the top-level
 *   part of the content type (`image`, `text`, …; `other` without one); `active`: responses under way;
 *   `link`: its delay rules, read at each response (a bench may change `rttMs` and `bytesPerMs`
 *   between phases: seeding a holder at loopback speed, say)
 */
export async function startSlowOrigin ({ target, rttMs, mbps }) {
  const link = new DistantLink({ rttMs, mbps })
  const proxy = {
    url: '',
    /** @type {((html: string, url: URL) => string) | null} */
    html: null,
    /** @type {Record<string, number>} */
    sent: {},
    active: 0,
    link,
    close: () => new Promise((resolve) => {
      server.close(() => resolve(undefined))
      server.closeAllConnections()
    })
  }
  const server = createServer(async (req, res) => {
    proxy.active++
    try {
      /** @type {Record<string, string>} */
      const headers = {}
      for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && typeof v === 'string') headers[k] = v
      const [upstream] = await Promise.all([
        fetch(target + req.url, { method: req.method, headers, redirect: 'manual' }),
        link.arrive(req)
      ])
      /** @type {Buffer} */
      let body = Buffer.from(await upstream.arrayBuffer())
      const type = upstream.headers.get('content-type') ?? ''
      if (proxy.html && type.startsWith('text/html')) body = Buffer.from(proxy.html(body.toString('utf8'), new URL(req.url ?? '/', proxy.url)))
      const out = Object.fromEntries([...upstream.headers].filter(([k]) => k !== 'content-length' && k !== 'content-encoding' && k !== 'transfer-encoding'))
      res.writeHead(upstream.status, upstream.status === 304 || upstream.status === 204 ? out : { ...out, 'content-length': body.length })
      if (req.method === 'HEAD' || upstream.status === 304 || upstream.status === 204) return res.end()
      const kind = type.split('/')[0].trim().toLowerCase() || 'other'
      await link.send(res, body, (n) => { proxy.sent[kind] = (proxy.sent[kind] ?? 0) + n })
    } catch {
      if (!res.headersSent) res.writeHead(502)
      res.end()
    } finally {
      proxy.active--
    }
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  proxy.url = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`
  return proxy
}
