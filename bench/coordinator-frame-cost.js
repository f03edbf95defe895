#!/usr/bin/env node
/**
 * The coordinator's own CPU per transaction, without sockets: a coordinator on
 * the in-process store is handed connections whose `ws` is a stand-in that
 * keeps what it is sent, and each client's frames go straight to the
 * coordinator's message handler. What is timed is everything the coordinator
 * does per frame — the rate limit, the envelope and field checks, the
 * handlers, the store, the introductions, the replies' and relayed offers'
 * JSON — and nothing of `ws` framing, the kernel or a load generator, which
 * bench/coordinator-load.js measures with the rest. So an A/B of a change to
 * that work reads a few percent here where the end-to-end bench's spread on a
 * shared 2-core machine is ±15 %.
 *
 * One transaction is bench/coordinator-load.js's: a lookup of an asset with an
 * offer (handed to the first holder named), then an update swapping one asset.
 * With `--workload relay`, one transaction is one relayed signal, as in that
 * bench's relay workload: each client, introduced to its partner (the next
 * client) by a lookup, sends it a trickled ICE candidate (`connect`, no `ref`);
 * its frames are built before the runs, so what is timed is the coordinator's alone.
 * Prints one JSON line: µs of CPU per transaction per run, and their median.
 *
 *   node bench/coordinator-frame-cost.js [--workload transaction|relay] [--clients 1000]
 *     [--assets 2000] [--have 20] [--transactions 200000] [--runs 3]
 */
import { EventEmitter } from 'node:events'
import { createHash } from 'node:crypto'
import { setImmediate as turn } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { startCoordinator } from '../coordinator/src/server.js'
import { PROTOCOL_VERSION } from '../protocol/index.js'
import { RELAY_CANDIDATE } from './coordinator-load/bench-client.js'

const USAGE = `usage: node bench/coordinator-frame-cost.js [--workload transaction|relay (transaction)]
  [--clients N (1000)] [--assets N (2000)] [--have N (20)] [--transactions N (200000)] [--runs N (3)]

The coordinator's own CPU per transaction (a lookup with an offer, then an update swapping one
asset), in process, without sockets: --clients clients each holding --have of --assets made-up
assets; --runs measured runs of --transactions each (a quarter as many warm up first). Prints
one JSON line: µs of CPU per transaction per run, their median, and the error replies (0).
--workload relay: a transaction is one ICE candidate relayed from a client to its partner
(--assets and --have unused).
`
const FLAGS = /** @type {const} */ ({ clients: 1000, assets: 2000, have: 20, transactions: 200_000, runs: 3 })

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

/** @returns {(Record<keyof typeof FLAGS, number> & { workload: string }) | null} the flags' values; null after --help */
function options () {
  const { values } = parseArgs({ options: { ...Object.fromEntries(Object.keys(FLAGS).map((f) => [f, { type: 'string' }])), workload: { type: 'string', default: 'transaction' }, help: { type: 'boolean' } } })
  if (values.help) {
    process.stdout.write(USAGE)
    return null
  }
  const { workload } = values
  if (workload !== 'transaction' && workload !== 'relay') throw new Error(`--workload must be transaction or relay, got ${JSON.stringify(workload)}`)
  const read = /** @type {Record<keyof typeof FLAGS, number> & { workload: string }} */ ({ ...FLAGS, workload })
  for (const flag of /** @type {(keyof typeof FLAGS)[]} */ (Object.keys(FLAGS))) {
    const given = /** @type {Record<string, unknown>} */ (values)[flag]
    if (given === undefined) continue
    const n = Number(given)
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${flag} must be a positive integer, got ${JSON.stringify(given)}`)
    read[flag] = n
  }
  if (read.have > read.assets) throw new Error('--have must not be above --assets')
  return read
}

async function main () {
  const read = options()
  if (read === null) return
  const { workload, clients, assets: assetCount, have, transactions, runs } = read
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
    await run(Math.ceil(transactions / 4))
    /** @type {number[]} */
    const usPerTx = []
    for (let r = 0; r < runs; r++) {
      const before = process.cpuUsage()
      await run(transactions)
      const { user, system } = process.cpuUsage(before)
      usPerTx.push(Math.round((user + system) / transactions * 100) / 100)
    }
    const errors = peers.reduce((n, p) => n + p.ws.errors, 0)
    const sorted = [...usPerTx].sort((a, b) => a - b)
    const mid = sorted.length >> 1
    const median = sorted.length % 2 === 1 ? sorted[mid] : Math.round((sorted[mid - 1] + sorted[mid]) * 50) / 100
    const signals = peers.reduce((n, p) => n + p.ws.signals, 0)
    process.stdout.write(JSON.stringify({ workload, clients, assets: assetCount, have, transactions, runs, usPerTx, medianUsPerTx: median, errors, framesSent: peers.reduce((n, p) => n + p.ws.sent, 0), signals }) + '\n')
  } finally {
    await coordinator.close()
  }
}

main().catch((err) => {
  process.stderr.write(`coordinator-frame-cost: ${err.message}\n${USAGE}`)
  process.exitCode = 2
})
