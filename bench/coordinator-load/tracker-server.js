#!/usr/bin/env node
/**
 * WebTorrent's WebSocket tracker (the `bittorrent-tracker` package's Server,
 * WebSocket only, in memory), for the load generator's `--server
 * bittorrent-tracker`: the signalling server people run today for browser
 * peers, under the same load as the coordinator. Its clients speak its own
 * protocol (tracker-client.js); the tracker code runs unchanged.
 *
 * GET /healthz answers 200 and GET /stats `{ localPeers }` (sockets that have
 * announced), which is what the bench reads; everything else on the port is
 * the tracker's. Loopback only; `--port N`, and `--stun-port` is accepted and
 * ignored so that it takes the coordinator's command line. SIGINT or SIGTERM
 * stops it.
 */
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import { Server } from 'bittorrent-tracker'

/** @typedef {import('ws').WebSocket & { peerId?: string | null }} TrackerSocket */

const { values } = parseArgs({ options: { port: { type: 'string' }, 'stun-port': { type: 'string' } } })
const port = Number(values.port ?? 0)

// The tracker's WebSocket server without an HTTP server of its own: this one
// hands it the upgrades, so that the bench's /healthz and /stats can be answered.
const tracker = new Server({ http: false, udp: false, stats: false, ws: { noServer: true } })
tracker.on('warning', () => {}) // a client's bad request: the tracker answers it, nothing to log here
tracker.on('error', (err) => {
  process.stderr.write(`bittorrent-tracker: ${err.message}\n`)
  process.exitCode = 1
})
const wss = /** @type {import('ws').WebSocketServer} */ (tracker.ws)
/** @type {Set<TrackerSocket>} */
const sockets = new Set()

const http = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0]
  let localPeers = 0
  for (const socket of sockets) if (socket.peerId) localPeers++
  const body = path === '/healthz' ? { ok: true } : path === '/stats' ? { localPeers } : null
  res.writeHead(body === null ? 404 : 200, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body ?? { error: 'not found' }))
})
http.on('upgrade', (req, socket, head) => {
  wss.handleUpgrade(req, socket, head, (ws) => {
    sockets.add(ws)
    ws.once('close', () => sockets.delete(ws))
    wss.emit('connection', ws, req)
  })
})
http.listen(port, '127.0.0.1')

for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    for (const ws of sockets) ws.terminate()
    tracker.close()
    http.close(() => process.exit(0))
    http.closeAllConnections() // the bench's fetches keep theirs alive
  })
}
