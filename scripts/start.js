#!/usr/bin/env node
/**
 * `npm start`: the whole demo in one process — a coordinator (in-process store,
 * or Redis when REDIS_URL is set) with its STUN server, and the demo shop whose
 * origin counts its bytes, plus the live dashboard. Prints the URLs.
 *
 * PORT (demo, default 8080), COORDINATOR_PORT (7070), STUN_PORT (3478),
 * HOST (127.0.0.1), REDIS_URL, LOG_LEVEL (warn; the coordinator's JSON log
 * lines), and ORIGIN_RTT_MS (80) / ORIGIN_MBPS (5), how far away the shop's
 * origin acts (0: loopback speed), override the defaults. The client runs at
 * its defaults.
 */
import { buildClient } from '../client/build.js'
import { startCoordinator } from '../coordinator/src/server.js'
import { createLogger } from '../coordinator/src/logger.js'
import { startDemoSite } from '../demo-site/src/server.js'
import { demoOptionsFrom } from '../demo-site/bin/maygh-demo.js'

const env = process.env
const host = env.HOST ?? '127.0.0.1'

try {
  const bundle = await buildClient()
  const sitePort = Number(env.PORT ?? 8080)
  const coordinator = await startCoordinator({
    host,
    port: Number(env.COORDINATOR_PORT ?? 7070),
    stunPort: Number(env.STUN_PORT ?? 3478),
    redisUrl: env.REDIS_URL || null,
    // Only the shop's pages may use it (no token secret: the allow-list alone applies).
    allowedOrigins: shopOrigins(host, sitePort)
  }, { log: createLogger({ level: env.LOG_LEVEL || 'warn' }) })
  // The origin as far away as a real one (the client's defaults are made for that, not for
  // loopback), read from ORIGIN_RTT_MS / ORIGIN_MBPS as the image's demo command reads them.
  const { link } = demoOptionsFrom(env)
  const site = await startDemoSite({ host, port: sitePort, coordinatorUrl: coordinator.url, clientDir: bundle.outdir, link })
  console.log(`
  Maygh demo is running
    shop         ${site.url}/  (transparent mode; ${site.url}/elements: marked-element mode)
    savings      ${coordinator.httpUrl}/dashboard  (the coordinator's, for any site: what visitors served each other)
    origin view  ${site.url}/dashboard  (the demo origin's own byte counter, charted over its last 10 minutes)
    origin stats ${site.url}/origin-stats
    coordinator  ${coordinator.url}  for pages of ${coordinator.config.allowedOrigins?.join(', ') ?? 'any origin'} (health ${coordinator.httpUrl}/healthz, stats ${coordinator.httpUrl}/stats, metrics ${coordinator.httpUrl}/metrics)
    STUN         ${coordinator.stunUrl}
    store        ${coordinator.config.redisUrl ? coordinator.config.redisUrl : 'in-process (set REDIS_URL for Redis)'}
    origin       ${link ? `as if ${link.rttMs} ms away at ${link.mbps} Mbit/s per response (emulated: ORIGIN_RTT_MS, ORIGIN_MBPS; ORIGIN_RTT_MS=0 for loopback speed)` : 'at loopback speed (ORIGIN_RTT_MS=0)'}
    client       ${bundle.bundles.map((b) => `/${b.file} ${b.gzipBytes} B`).join(', ')} (gzipped)

  Open the shop in two different browsers (or a normal and a private window):
  the second visitor's images come from the first. Ctrl-C stops.
`)
  const stop = async () => {
    await Promise.all([site.close(), coordinator.close()])
    process.exit(0)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
} catch (err) {
  console.error(`npm start: ${err.code ?? err.name}: ${err.message}`)
  if (err.code === 'EADDRINUSE') console.error('a port is taken: set PORT, COORDINATOR_PORT or STUN_PORT')
  process.exit(1)
}

/**
 * The origins a browser may show the shop under: its host and port, and the
 * loopback names for the same address.
 * @param {string} host
 * @param {number} port
 * @returns {string[] | null} null (any origin) when they cannot be known
 */
function shopOrigins (host, port) {
  // Bound to every address, or to a port chosen at start: the origin browsers will use is not known here.
  if (port === 0 || host === '0.0.0.0' || host === '::') return null
  const loopback = ['127.0.0.1', 'localhost', '[::1]']
  const hosts = loopback.includes(host) || host === '::1' ? loopback : [host.includes(':') ? `[${host}]` : host]
  return hosts.map((name) => `http://${name}:${port}`)
}
