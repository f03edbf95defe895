/**
 * The delay rules of a link to a faraway server (`DistantLink`): a round trip
 * before each response's head, two on a connection's first request for the
 * TCP handshake, then the body no faster than a given rate per response,
 * which over HTTP/1.1 is per connection. netem is not available here
 * (shared/TEST-ENV.md), so the delay is emulated in process. The demo shop
 * (demo-site/src/server.js) and the crowd's replay origin
 * (swarm/src/replay-site.js) apply it to their own responses, so that what
 * they count is what left them; the benchmarks' proxy (bench/slow-origin.js)
 * puts it in front of a local site. Here in common/, as the demo shop's image
 * runs it and holds no bench/.
 */
import { setTimeout as sleep } from 'node:timers/promises'

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
