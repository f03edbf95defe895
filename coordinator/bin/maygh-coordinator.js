#!/usr/bin/env node
/**
 * maygh-coordinator: runs one coordinator shard. Options come from flags, then
 * environment variables, then the defaults (README.md, "Configuration").
 */
import { optionsFrom } from '../src/cli-options.js'
import { startCoordinator } from '../src/server.js'

async function main () {
  let coordinator
  try {
    coordinator = await startCoordinator(optionsFrom(process.argv.slice(2), process.env))
  } catch (err) {
    console.error(`maygh-coordinator: ${err.code ?? err.name}: ${err.message}`)
    process.exit(2)
  }
  coordinator.on('warning', (err, context) => {
    if (process.env.LOG_LEVEL !== 'silent') console.warn(`maygh-coordinator: warning: ${context}: ${err.message}`)
  })
  console.log(`maygh-coordinator: shard ${coordinator.shard} on ${coordinator.url} (health ${coordinator.httpUrl}/healthz), STUN ${coordinator.stunUrl || 'off'}, store ${coordinator.config.redisUrl ? 'redis' : 'memory'}`)
  // SIGTERM (what orchestrators send) drains: clients move to the other
  // coordinators over DRAIN_WINDOW_MS, then the process exits. A second signal,
  // or SIGINT, stops at once (clients reconnect elsewhere).
  let stopping = false
  const stop = async (/** @type {boolean} */ drain) => {
    if (stopping) process.exit(1)
    stopping = true
    if (drain) await coordinator.drain(coordinator.config.drainWindowMs)
    await coordinator.close()
    process.exit(0)
  }
  process.on('SIGINT', () => stop(false))
  process.on('SIGTERM', () => stop(true))
}

main()
