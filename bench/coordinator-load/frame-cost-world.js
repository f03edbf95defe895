/**
 * The in-process world of bench/coordinator-frame-cost.js (and of its A/B,
 * bench/coordinator-frame-cost-ab.js): a coordinator on the in-process store
 * handed connections whose `ws` is a stand-in that keeps count of what it is
 * sent, joined clients, and the workload that feeds their frames straight to
 * the coordinator's message handler.
 */
import { EventEmitter } from 'node:events'
import { createHash } from 'node:crypto'
import { setImmediate as turn } from 'node:timers/promises'
import { PROTOCOL_VERSION } from '../../protocol/index.js'
import { RELAY_CANDIDATE } from './bench-client.js'

/** An offer as a browser's, with a few host candidates in its SDP. */
const OFFER = { type: 'offer', sdp: 'v=0\r\n' + 'a=candidate:1 1 udp 2122260223 192.168.1.2 54321 typ host\r\n'.repeat(6) }
/** Replies are dropped every this many transactions, after a turn of the event loop. */
const TURN_EVERY = 256

/** A connection's socket as the coordinator uses it: what it is sent is counted and dropped. */
class StandInSocket extends EventEmitter {
  OPEN = 1
  readyState = 1
  bufferedAmount = 0
  sent = 0
  errors = 0
  /** relayed signals it was sent */
  signals = 0
  /** the peer id its welcome named */
  id = ''
  /** @param {string} text */
  send (text) {
    this.sent++
    if (text.startsWith('{"type":"connect"')) this.signals++
    else if (text.startsWith('{"type":"error"')) this.errors++
    else if (text.startsWith('{"type":"welcome"')) this.id = JSON.parse(text).id
  }

  ping () {}
  terminate () { this.close() }
  /** closed as a socket closes: 'close' a moment later (what the coordinator's stop waits for) */
  close () {
    if (this.readyState === 3) return
    this.readyState = 3
    setImmediate(() => this.emit('close'))
  }
}

/**
 * @typedef {object} FrameCostWorld
 * @property {(n: number) => Promise<void>} run n transactions (relay: n relayed frames), then a turn of the event loop
 * @property {() => { errors: number, sent: number, signals: number }} counts error replies, frames sent and relayed signals received, over every client
 * @property {() => Promise<void>} close
 */

/**
 * Start a coordinator and join the clients of a workload.
 * @param {typeof import('../../coordinator/src/server.js').startCoordinator} startCoordinator the coordinator's, from the tree being measured
 * @param {{ workload: string, clients: number, assets: number, have: number }} options
 * @returns {Promise<FrameCostWorld>}
 */
export async function openWorld (startCoordinator, { workload, clients, assets: assetCount, have }) {
  const coordinator = await startCoordinator({
    port: 0,
    stunPort: 0,
    logLevel: 'silent',
    // Each client stands for many peers, as in bench/coordinator-load.js.
    rateLimitPerSecond: 1_000_000,
    rateLimitBurst: 1_000_000,
    newHolderBurst: 0,
    maxConnectionsPerIp: 0,
    introductionSignalBytes: 16 * 1024 * 1024,
    // relay: one introduction carries every signal of a run, however long it takes
    ...(workload === 'relay' ? { introductionTtlMs: 3_600_000 } : {})
  })
  try {
    return await joinClients(coordinator, { workload, clients, assetCount, have })
  } catch (err) {
    await coordinator.close()
    throw err
  }
}

/**
 * @param {import('../../coordinator/src/server.js').Coordinator} coordinator
 * @param {{ workload: string, clients: number, assetCount: number, have: number }} options
 * @returns {Promise<FrameCostWorld>}
 */
async function joinClients (coordinator, { workload, clients, assetCount, have }) {
  const { wss } = coordinator
  if (wss === undefined) throw new Error('the coordinator has no WebSocket server')
  /** @param {string} name @returns {string} a made-up asset's SRI name */
  const sri = (name) => 'sha256-' + createHash('sha256').update(name).digest('base64')
  const assets = workload === 'relay' ? [] : Array.from({ length: assetCount }, (_, i) => sri(`asset ${i}`))
  /** @type {{ ws: StandInSocket, held: string[] }[]} */
  const peers = []
  for (let i = 0; i < clients; i++) {
    const ws = new StandInSocket()
    wss.emit('connection', ws, { socket: { remoteAddress: '127.0.0.1' }, headers: {} })
    const held = new Set()
    // relay: one asset of its own, by which its partner is introduced to it
    if (workload === 'relay') held.add(sri(`relay ${i}`))
    else while (held.size < have) held.add(assets[Math.floor(Math.random() * assetCount)])
    ws.emit('message', Buffer.from(JSON.stringify({ type: 'join', have: [...held], ref: 0 })), false)
    peers.push({ ws, held: [...held] })
  }
  await turn()
  let ref = 1
  /** @type {(n: number) => Promise<void>} */
  let run
  if (workload === 'relay') {
    const partner = (/** @type {number} */ i) => peers[(i + 1) % clients]
    peers.forEach(({ ws }, i) => ws.emit('message', Buffer.from(JSON.stringify({ v: PROTOCOL_VERSION, type: 'lookup', hash: partner(i).held[0], ref: ref++ })), false))
    await turn()
    // Trickled candidates: no ref, so no reply; one frame per client, as its socket would hand it over.
    const frames = peers.map((_, i) => Buffer.from(JSON.stringify({ v: PROTOCOL_VERSION, type: 'connect', to: partner(i).ws.id, signal: { cid: `r${i}`, candidate: RELAY_CANDIDATE } })))
    run = async (n) => {
      for (let i = 0; i < n; i++) {
        const c = i % clients
        peers[c].ws.emit('message', frames[c], false)
        if (i % TURN_EVERY === 0) await turn()
      }
      await turn()
    }
  } else {
    run = async (n) => {
      for (let i = 0; i < n; i++) {
        const { ws, held } = peers[i % clients]
        const want = assets[Math.floor(Math.random() * assetCount)]
        ws.emit('message', Buffer.from(JSON.stringify({ type: 'lookup', hash: want, offers: [{ ...OFFER, cid: 'c' + (ref % 1e6) }], ref: ref++ })), false)
        // What it fetched in, one of the others out (nothing changes when it held the asset already).
        const at = Math.floor(Math.random() * held.length)
        const swap = held.includes(want) ? null : held[at]
        if (swap !== null) held[at] = want
        ws.emit('message', Buffer.from(JSON.stringify({ type: 'update', add: swap === null ? [] : [want], remove: swap === null ? [] : [swap], ref: ref++ })), false)
        if (i % TURN_EVERY === 0) await turn()
      }
      await turn()
    }
  }
  return {
    run,
    counts: () => ({ errors: peers.reduce((n, p) => n + p.ws.errors, 0), sent: peers.reduce((n, p) => n + p.ws.sent, 0), signals: peers.reduce((n, p) => n + p.ws.signals, 0) }),
    close: () => coordinator.close()
  }
}
