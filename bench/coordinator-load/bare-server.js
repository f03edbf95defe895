#!/usr/bin/env node
/**
 * The cost floor of the coordinator's frames over `ws`, for the load
 * generator's `--server bare`: a bare `ws` server that answers the bench's
 * traffic with exactly the frames the coordinator sends — one
 * `ws.send(JSON.stringify(…))` per reply or relayed signal — and does nothing
 * else: no store, no validation, no rate or size limits, no metrics, no logs.
 * What the coordinator spends per transaction above what this spends is what
 * its own work costs. Not a coordinator: it must never serve real clients.
 *
 *   join    → welcome { id, ref }           (an id shaped as the coordinator's)
 *   lookup  → holders { hash, peers, ref }  (one random other joined peer, or none); with
 *             `offers`, the first goes to that peer as connect { from, signal, introduced } and
 *             the reply says so (offered { peer: cid })
 *   connect → connect { from, signal } to the target, relayed { to, ref } to the sender
 *   update  → updated { holding, ref }      (the count the sender holds)
 *
 * GET /healthz answers 200, GET /stats its own counts (`localPeers` is what
 * the bench reads), GET /metrics what held its event loop up, in the names of
 * the coordinator's process metrics (loop delay p99 and max since the last
 * read, seconds collecting garbage by kind: loop-stats.js reads both alike).
 * Loopback only; `--port N`, and `--stun-port` is accepted
 * and ignored so that it takes the coordinator's command line. SIGINT or
 * SIGTERM stops it.
 */
import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { PerformanceObserver, constants, monitorEventLoopDelay } from 'node:perf_hooks'
import { WebSocketServer } from 'ws'

/** @typedef {import('ws').WebSocket} WebSocket */
/** @typedef {{ ws: WebSocket, id: string | null, holding: number }} Peer */

const { values } = parseArgs({ options: { port: { type: 'string' }, 'stun-port': { type: 'string' } } })
const port = Number(values.port ?? 0)

// The coordinator's peer ids are `<8-character shard>~<22 characters>`; these have the same length.
const shard = randomBytes(6).toString('base64url')

/** @type {Map<string, Peer>} joined peers by id */
const peers = new Map()
/** @type {string[]} the same ids, for picking one at random */
const ids = []
/** @type {Map<string, number>} each id's index in `ids` */
const indexOf = new Map()
const counts = { connections: 0, messages: 0, lookups: 0, lookupHits: 0, updates: 0, relayed: 0, errors: 0 }

/** @param {Peer} peer @param {string} id */
function add (peer, id) {
  peer.id = id
  peers.set(id, peer)
  indexOf.set(id, ids.length)
  ids.push(id)
}

/** @param {string} id */
function remove (id) {
  const i = /** @type {number} */ (indexOf.get(id))
  const last = /** @type {string} */ (ids.pop())
  if (last !== id) {
    ids[i] = last
    indexOf.set(last, i)
  }
  indexOf.delete(id)
  peers.delete(id)
}

/**
 * @param {string} asker
 * @returns {string[]} one joined peer other than `asker`, picked at random, or none
 */
function otherPeer (asker) {
  if (ids.length < 2) return []
  const i = Math.floor(Math.random() * (ids.length - 1))
  // Every index but the asker's, with equal chance.
  return [ids[i >= /** @type {number} */ (indexOf.get(asker)) ? i + 1 : i]]
}

/**
 * @param {Peer} peer
 * @param {any} message
 */
function handle (peer, message) {
  const { ws } = peer
  const ref = message.ref
  switch (message.type) {
    case 'join':
      add(peer, `${shard}~${randomBytes(16).toString('base64url')}`)
      peer.holding = message.have?.length ?? 0
      ws.send(JSON.stringify({ type: 'welcome', id: peer.id, ref }))
      return
    case 'lookup': {
      if (message.hashes !== undefined) return lookupMany(peer, message)
      const found = otherPeer(/** @type {string} */ (peer.id))
      counts.lookups++
      if (found.length > 0) counts.lookupHits++
      const offer = message.offers?.[0]
      if (offer !== undefined && found.length > 0) {
        /** @type {Peer} */ (peers.get(found[0])).ws.send(JSON.stringify({ type: 'connect', from: peer.id, signal: offer, introduced: true }))
        counts.relayed++
        ws.send(JSON.stringify({ type: 'holders', hash: message.hash, peers: found, offered: { [found[0]]: offer.cid }, ref }))
        return
      }
      ws.send(JSON.stringify({ type: 'holders', hash: message.hash, peers: found, ref }))
      return
    }
    case 'connect': {
      const target = peers.get(message.to)
      if (target === undefined) {
        // As the coordinator answers: a target that has left is no success.
        counts.errors++
        ws.send(JSON.stringify({ type: 'error', code: 'MGH_ERR_UNKNOWN_PEER', message: message.to, ref }))
        return
      }
      target.ws.send(JSON.stringify({ type: 'connect', from: peer.id, signal: message.signal }))
      counts.relayed++
      if (ref !== undefined) ws.send(JSON.stringify({ type: 'relayed', to: message.to, ref }))
      return
    }
    case 'update':
      peer.holding += (message.add?.length ?? 0) - (message.remove?.length ?? 0)
      counts.updates++
      ws.send(JSON.stringify({ type: 'updated', holding: peer.holding, ref }))
  }
}

/**
 * A page's lookup (`hashes`, with `offers`): one random other peer per asset, and each offer
 * handed to the next asset's peer, as the coordinator hands offers out.
 * @param {Peer} peer
 * @param {any} message
 */
function lookupMany (peer, message) {
  /** @type {Record<string, string[]>} */
  const found = {}
  /** @type {Record<string, string>} */
  const offered = {}
  const offers = message.offers ?? []
  let next = 0
  for (const hash of message.hashes) {
    const holders = found[hash] = otherPeer(/** @type {string} */ (peer.id))
    counts.lookups++
    if (holders.length === 0) continue
    counts.lookupHits++
    const offer = offers[next]
    if (offer === undefined || offered[holders[0]] !== undefined) continue
    next++
    offered[holders[0]] = offer.cid
    const target = /** @type {Peer} */ (peers.get(holders[0]))
    target.ws.send(JSON.stringify({ type: 'connect', from: peer.id, signal: offer, introduced: true }))
    counts.relayed++
  }
  peer.ws.send(JSON.stringify({ type: 'holders', found, offered, ref: message.ref }))
}

// Measured as prom-client measures the coordinator's (its defaults: a 10 ms resolution; GC kinds by name).
const loopDelay = monitorEventLoopDelay({ resolution: 10 })
loopDelay.enable()
/** @type {Record<string, number>} seconds collecting garbage, by kind */
const gcS = { minor: 0, major: 0, incremental: 0, weakcb: 0 }
const GC_KINDS = /** @type {Record<number, string>} */ ({
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb'
})
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = GC_KINDS[/** @type {{ detail?: { kind?: number } }} */ (entry).detail?.kind ?? 0]
    if (kind !== undefined) gcS[kind] += entry.duration / 1000
  }
}).observe({ entryTypes: ['gc'] })

/** @returns {string} the loop's delay since the last read (then started afresh) and the collections, as Prometheus text */
function loopMetrics () {
  const lines = [`nodejs_eventloop_lag_p99_seconds ${loopDelay.percentile(99) / 1e9}`, `nodejs_eventloop_lag_max_seconds ${loopDelay.max / 1e9}`]
  for (const [kind, s] of Object.entries(gcS)) lines.push(`nodejs_gc_duration_seconds_sum{kind="${kind}"} ${s}`)
  loopDelay.reset()
  return lines.join('\n') + '\n'
}

const http = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0]
  if (path === '/metrics') {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end(loopMetrics())
    return
  }
  const body = path === '/healthz' ? { ok: true, shard } : path === '/stats' ? { shard, localPeers: peers.size, ...counts } : null
  res.writeHead(body === null ? 404 : 200, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body ?? { error: 'not found' }))
})
const wss = new WebSocketServer({ server: http, perMessageDeflate: false })
wss.on('connection', (ws) => {
  counts.connections++
  /** @type {Peer} */
  const peer = { ws, id: null, holding: 0 }
  ws.on('message', (data) => {
    counts.messages++
    handle(peer, JSON.parse(String(data)))
  })
  ws.on('close', () => { if (peer.id !== null) remove(peer.id) })
  ws.on('error', () => {}) // 'close' follows
})
http.listen(port, '127.0.0.1')

for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    for (const ws of wss.clients) ws.terminate()
    wss.close()
    http.close(() => process.exit(0))
    http.closeAllConnections() // the bench's fetches keep theirs alive
  })
}
