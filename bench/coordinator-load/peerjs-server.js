#!/usr/bin/env node
/**
 * PeerJS's signalling server (the `peer` package, peerjs-server, in memory),
 * for the load generator's `--server peerjs` (`--workload relay` only): what
 * people run today to relay WebRTC signals between browsers, under the same
 * relay-only load as the coordinator. Its clients speak its own protocol
 * (peerjs-client.js); the server code runs unchanged, with its limits lifted
 * as the coordinator's are for the bench (each bench client stands for many
 * peers).
 *
 * GET /healthz answers 200 and GET /stats `{ localPeers }` (clients whose
 * socket is open), which is what the bench reads; the rest is PeerJS's
 * (WebSocket at /peerjs). Loopback only; `--port N`, and `--stun-port` is
 * accepted and ignored so that it takes the coordinator's command line.
 * SIGINT or SIGTERM stops it.
 */
import { parseArgs } from 'node:util'
import { PeerServer } from 'peer'

const { values } = parseArgs({ options: { port: { type: 'string' }, 'stun-port': { type: 'string' } } })
const port = Number(values.port ?? 0)

let localPeers = 0
/** @type {import('node:http').Server | null} */
let http = null
// PeerJS's own HTTP server and Express app; the bench's two routes are added to the app.
const peers = PeerServer({ port, host: '127.0.0.1', path: '/', concurrent_limit: 10_000_000, alive_timeout: 3_600_000 }, (server) => { http = /** @type {import('node:http').Server} */ (server) })
peers.get('/healthz', (_req, res) => { res.json({ ok: true }) })
peers.get('/stats', (_req, res) => { res.json({ localPeers }) })
peers.on('connection', () => { localPeers++ })
peers.on('disconnect', () => { localPeers-- })
peers.on('error', (/** @type {Error} */ err) => { process.stderr.write(`peerjs-server: ${err.message}\n`) })

for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    http?.close(() => process.exit(0))
    http?.closeAllConnections()
    setTimeout(() => process.exit(0), 500).unref()
  })
}
