/**
 * A TCP relay that puts a local server at a distance (bench/page-load.js
 * `--coordinator-rtt`): every chunk either way is passed on half a round trip
 * later, in order, and a connection's first chunk waits one round trip more
 * (the TCP handshake a real client pays before it can send). So a WebSocket
 * to a coordinator behind it opens in two round trips (handshake, upgrade),
 * as a `ws://` one far away does (a `wss://` one pays a third, for TLS: not
 * emulated), and each request and its reply take one. netem is not available
 * here (shared/TEST-ENV.md).
 */
import { createServer, connect } from 'node:net'
import { once } from 'node:events'

/**
 * @param {{ port: number, host?: string, rttMs: number }} o the server to relay to
 * @returns {Promise<{ port: number, close: () => Promise<void> }>}
 */
export async function startDistantTcp ({ port, host = '127.0.0.1', rttMs }) {
  const half = rttMs / 2
  /** @type {Set<import('node:net').Socket>} */
  const open = new Set()
  const server = createServer((client) => {
    const upstream = connect(port, host)
    for (const s of [client, upstream]) {
      open.add(s)
      s.on('close', () => open.delete(s))
      s.on('error', () => { client.destroy(); upstream.destroy() })
    }
    /**
     * @param {import('node:net').Socket} from
     * @param {import('node:net').Socket} to
     * @param {number} first extra delay of the first chunk
     */
    const pass = (from, to, first) => {
      // Never before an earlier chunk: each is due no sooner than the one before it.
      let due = performance.now() + first + half
      const later = (/** @type {() => void} */ fn) => {
        due = Math.max(due, performance.now() + half)
        setTimeout(fn, due - performance.now())
      }
      from.on('data', (chunk) => later(() => { if (!to.destroyed) to.write(chunk) }))
      from.on('end', () => later(() => to.end()))
    }
    pass(client, upstream, rttMs)
    pass(upstream, client, 0)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    port: /** @type {import('node:net').AddressInfo} */ (server.address()).port,
    close: async () => {
      for (const s of open) s.destroy()
      server.close()
      await once(server, 'close')
    }
  }
}
