#!/usr/bin/env node
/**
 * `npm start`: the whole demo in one process — a coordinator (in-process store,
 * or Redis when REDIS_URL is set) with its STUN server, and the demo shop whose
 * origin counts its bytes, plus the live dashboard. Prints the URLs.
 *
 * PORT (demo, default 8080), COORDINATOR_PORT (7070), STUN_PORT (3478),
 * HOST (127.0.0.1), REDIS_URL and LOG_LEVEL (warn; the coordinator's JSON log
 * lines) override the defaults.
 */
import { buildClient } from '../client/build.js'
import { startCoordinator } from '../coordinator/src/server.js'
import { createLogger } from '../coordinator/src/logger.js'
import { startDemoSite } from '../demo-site/src/server.js'

const env = process.env
const host = env.HOST ?? '127.0.0.1'

try {
  const bundle = await buildClient()
  const coordinator = await startCoordinator({
    host,
    port: Number(env.COORDINATOR_PORT ?? 7070),
    stunPort: Number(env.STUN_PORT ?? 3478),
    redisUrl: env.REDIS_URL || null
  }, { log: createLogger({ level: env.LOG_LEVEL || 'warn' }) })
  const site = await startDemoSite({ host, port: Number(env.PORT ?? 8080), coordinatorUrl: coordinator.url, clientBundlePath: bundle.outfile })
  console.log(`
  Maygh demo is running
    shop         ${site.url}/
    dashboard    ${site.url}/dashboard
    origin stats ${site.url}/origin-stats
    coordinator  ${coordinator.url}  (health ${coordinator.httpUrl}/healthz, stats ${coordinator.httpUrl}/stats, metrics ${coordinator.httpUrl}/metrics)
    STUN         ${coordinator.stunUrl}
    store        ${coordinator.config.redisUrl ? coordinator.config.redisUrl : 'in-process (set REDIS_URL for Redis)'}
    client       /maygh.js, ${bundle.gzipBytes} B gzipped

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
