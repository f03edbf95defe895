/**
 * A distant origin for benchmarks: the delay rules of a link to a faraway
 * server (`DistantLink`: a round trip before each response's head, two on a
 * connection's first request for the TCP handshake, then the body no faster
 * than a given rate per response, which over HTTP/1.1 is per connection),
 * and an HTTP proxy that puts them in front of a local site. netem is not
 * available here (shared/TEST-ENV.md), so the delay is emulated in process.
 * The crowd's replay origin (swarm/src/replay-site.js) applies the same link
 * to its own responses, so that what it counts is what left it.
 * HTML bodies can be rewritten on the way (`html`, given the body and the
 * request's URL), so one site serves pages with and without the client.
 * The proxy counts the body bytes it sent (`sent`, by media type), so a
 * benchmark counts the origin's bytes at the origin, not in its clients.
 */
import { createServer } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'

/** Request headers a browser sends that are the proxy's own business, not the site's. */
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection'])
/** Bytes sent per write while pacing. */
const CHUNK = 8192
/** Bytes per write when not pacing. */
const UNPACED_CHUNK = 64 * 1024

/** The delay rules of one distant link (see above). */
export class DistantLink {
  /** @param {{ rttMs: number, mbps: number }} o `mbps` Infinity: no pacing */
  constructor ({ rttMs, mbps }) {
    this.rttMs = rttMs
    this.bytesPerMs = mbps * 1e6 / 8 / 1000
    /** @type {WeakSet<import('node:net').Socket>} connections past their first request (their handshake) */
    this.warm = new WeakSet()
  }

  /**
   * Resolves when a response to this request may start: a round trip later, two on a new connection.
   * @param {import('node:http').IncomingMessage} req
   */
  arrive (req) {
    const handshake = this.warm.has(req.socket) ? 0 : this.rttMs
    this.warm.add(req.socket)
    return sleep(handshake + this.rttMs)
  }

  /**
   * Write `body` and end the response, no faster than the link's rate,
   * calling `count` with each chunk's length once the socket has taken it
   * (its write callback). Stops early when the client goes away: what was
   * still in Node's buffers then is not counted; what the kernel had taken
   * is (paced, about one chunk; unpaced on loopback, up to the socket's send
   * buffer, 4 MiB here).
   * @param {import('node:http').ServerResponse} res headers already sent or set
   * @param {Uint8Array} body
   * @param {(bytes: number) => void} [count]
   * @returns {Promise<boolean>} whether the whole body went out
   */
  async send (res, body, count = () => {}) {
    const paced = Number.isFinite(this.bytesPerMs)
    const step = paced ? CHUNK : UNPACED_CHUNK
    const start = performance.now()
    for (let at = 0; at < body.length; at += step) {
      const chunk = body.subarray(at, at + step)
      const wait = paced ? start + (at + chunk.length) / this.bytesPerMs - performance.now() : 0
      if (wait > 1) await sleep(wait)
      if (res.destroyed) return false
      const more = res.write(chunk, (err) => { if (!err) count(chunk.length) })
      if (!more) await drained(res)
    }
    if (res.destroyed) return false
    return new Promise((resolve) => {
      res.once('close', () => resolve(res.writableFinished))
      res.end()
    })
  }
}

/**
 * Resolves when `res` can take more, or has closed.
 * @param {import('node:http').ServerResponse} res
 * @returns {Promise<void>}
 */
function drained (res) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

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
