/**
 * The flooding client: it joins, then sends lookups as fast as its socket
 * takes them, never waiting for a reply, to show whether one greedy client
 * slows everyone else down. Its replies are counted, not parsed. It runs in a
 * worker of its own so that the other clients' latencies are not measured on
 * a saturated event loop.
 */
import { once } from 'node:events'
import { setImmediate as nextTurn } from 'node:timers/promises'
import WebSocket from 'ws'
import { PROTOCOL_VERSION } from '../../protocol/index.js'

/** Frames sent before yielding to the event loop, so replies are read while flooding. */
const BURST = 64
/** Bytes queued on the socket above which the flood waits, so its own memory stays bounded. */
const HIGH_WATER = 1024 * 1024

/**
 * @typedef {object} FloodResult
 * @property {number} sent lookups sent
 * @property {number} received replies received
 * @property {number} seconds how long it flooded
 * @property {number | null} closedAfterS when the coordinator first closed its socket (null: it did not)
 * @property {number | null} closeCode the close code it gave
 * @property {number} reconnects with `reconnect`, the sockets it tried to open again after being cut off
 * @property {number} refused of those, how many the coordinator refused at the upgrade
 */

/**
 * @param {{ url: string, pool: string[], seconds: number, reconnect?: boolean }} options `reconnect`: whenever
 *   the coordinator cuts it off, open a new socket at once, join and go on (an abuser that wants a fresh limit)
 * @returns {Promise<FloodResult>}
 */
export async function flood ({ url, pool, seconds, reconnect = false }) {
  const frames = pool.map((hash) => JSON.stringify({ v: PROTOCOL_VERSION, type: 'lookup', hash }))
  const started = performance.now()
  const until = started + seconds * 1000
  const result = { sent: 0, received: 0, seconds, closedAfterS: /** @type {number | null} */ (null), closeCode: /** @type {number | null} */ (null), reconnects: -1, refused: 0 }
  while (performance.now() < until) {
    result.reconnects++
    const ws = new WebSocket(url, { perMessageDeflate: false })
    ws.on('error', () => {}) // 'close' follows; the loop below stops on it
    const closed = new Promise((resolve) => ws.once('close', resolve))
    ws.once('close', (code) => {
      if (result.closedAfterS !== null) return
      result.closedAfterS = (performance.now() - started) / 1000
      result.closeCode = code
    })
    // Refused (HTTP 429 while its address is barred): at once again, as an abuser would.
    await new Promise((resolve) => { ws.once('open', resolve); ws.once('close', resolve) })
    if (ws.readyState !== WebSocket.OPEN) {
      result.refused++
      continue
    }
    const welcome = once(ws, 'message')
    ws.send(JSON.stringify({ v: PROTOCOL_VERSION, type: 'join', have: [] }))
    await Promise.race([welcome, closed])
    ws.on('message', () => { result.received++ })
    while (performance.now() < until && ws.readyState === WebSocket.OPEN) {
      for (let i = 0; i < BURST && ws.bufferedAmount < HIGH_WATER; i++) ws.send(frames[result.sent++ % frames.length])
      await nextTurn()
    }
    if (ws.readyState === WebSocket.OPEN) ws.close()
    await closed // the close handshake names the code
    if (!reconnect) break
  }
  result.reconnects = Math.max(0, result.reconnects)
  return result
}
