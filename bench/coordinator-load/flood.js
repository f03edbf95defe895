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
 * @property {number | null} closedAfterS when the coordinator closed the socket (null: it did not)
 * @property {number | null} closeCode the close code it gave
 */

/**
 * @param {{ url: string, pool: string[], seconds: number }} options
 * @returns {Promise<FloodResult>}
 */
export async function flood ({ url, pool, seconds }) {
  const ws = new WebSocket(url, { perMessageDeflate: false })
  ws.on('error', () => {}) // 'close' follows; the loop below stops on it
  await once(ws, 'open')
  const welcome = once(ws, 'message')
  ws.send(JSON.stringify({ v: PROTOCOL_VERSION, type: 'join', have: [] }))
  await welcome
  let received = 0
  ws.on('message', () => { received++ })
  const frames = pool.map((hash) => JSON.stringify({ v: PROTOCOL_VERSION, type: 'lookup', hash }))
  const started = performance.now()
  const until = started + seconds * 1000
  /** @type {Pick<FloodResult, 'closedAfterS' | 'closeCode'>} */
  const closedBy = { closedAfterS: null, closeCode: null }
  const closed = once(ws, 'close')
  ws.once('close', (code) => Object.assign(closedBy, { closedAfterS: (performance.now() - started) / 1000, closeCode: code }))
  let sent = 0
  while (performance.now() < until && ws.readyState === WebSocket.OPEN) {
    for (let i = 0; i < BURST && ws.bufferedAmount < HIGH_WATER; i++) ws.send(frames[sent++ % frames.length])
    await nextTurn()
  }
  if (ws.readyState === WebSocket.OPEN) {
    ws.close()
    await closed
    return { sent, received, closedAfterS: null, closeCode: null }
  }
  await closed // the coordinator is closing it: wait for the close handshake, which names the code
  return { sent, received, ...closedBy }
}
