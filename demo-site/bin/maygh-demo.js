#!/usr/bin/env node
/**
 * maygh-demo: the demo shop on its own, pointed at a coordinator that runs
 * elsewhere (the container image's second command; `npm start` runs both in
 * one process). Settings come from environment variables only, listed in
 * {@link DEMO_ENV}; the client bundle must be built first (`npm run build`,
 * done by the image's build stage).
 */
import { access } from 'node:fs/promises'
import { realpathSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEMO_DEFAULTS, startDemoSite } from '../src/server.js'

/** Environment variable → startDemoSite option; docker-compose.yml sets only these. */
export const DEMO_ENV = Object.freeze({
  /** TCP port of the shop (default 8080) */
  PORT: 'port',
  /** address to bind (default 127.0.0.1; 0.0.0.0 in a container) */
  HOST: 'host',
  /** the coordinator's WebSocket URL as browsers reach it (default ws://127.0.0.1:7070) */
  COORDINATOR_URL: 'coordinatorUrl',
  /** where the dashboard reads the coordinator's /stats (default: COORDINATOR_URL's host over http) */
  COORDINATOR_HTTP_URL: 'coordinatorHttpUrl',
  /** how far away the shop's origin acts, ms of round trip (default 80, as `npm start`; 0: loopback speed) */
  ORIGIN_RTT_MS: 'link',
  /** its bandwidth per response, Mbit/s (default 5) */
  ORIGIN_MBPS: 'link'
})

/**
 * @param {NodeJS.ProcessEnv} env
 * @returns {Partial<typeof DEMO_DEFAULTS>}
 */
export function demoOptionsFrom (env) {
  /** @type {Record<string, string | number>} */
  const options = {}
  for (const [name, option] of Object.entries(DEMO_ENV)) {
    const text = env[name]
    if (text === undefined || text === '' || option === 'link') continue
    options[option] = option === 'port' ? Number(text) : text
  }
  const rttMs = Number(env.ORIGIN_RTT_MS || 80)
  const mbps = Number(env.ORIGIN_MBPS || 5)
  if (!(rttMs >= 0 && mbps > 0)) throw new TypeError(`ORIGIN_RTT_MS must be a number of ms (0 or more) and ORIGIN_MBPS above 0, not ${env.ORIGIN_RTT_MS} / ${env.ORIGIN_MBPS}`)
  return { ...options, link: rttMs === 0 ? null : { rttMs, mbps } }
}

async function main () {
  let site
  try {
    site = await startDemoSite(demoOptionsFrom(process.env))
  } catch (err) {
    console.error(`maygh-demo: ${err.code ?? err.name}: ${err.message}`)
    process.exit(2)
  }
  const built = await access(join(DEMO_DEFAULTS.clientDir, 'maygh.js')).then(() => true, () => false)
  if (!built) console.warn('maygh-demo: warning: client bundle not built (run `npm run build`); /maygh.js answers 503 until it is')
  const { link } = demoOptionsFrom(process.env)
  console.log(`maygh-demo: shop on ${site.url}/ (dashboard ${site.url}/dashboard); its origin ${link ? `acts ${link.rttMs} ms away at ${link.mbps} Mbit/s` : 'at loopback speed'}`)
  const stop = async () => {
    await site.close()
    process.exit(0)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

// Run only as a program, not when a test imports DEMO_ENV.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) main()
