#!/usr/bin/env node
/**
 * maygh-coordinator: runs one coordinator shard. Options come from flags, then
 * environment variables, then the defaults (README.md, "Configuration";
 * `--help` lists them). Logs are JSON lines on stdout (pino), at `LOG_LEVEL`.
 */
import { optionsFrom } from '../src/cli-options.js'
import { resolveConfig, DESCRIPTIONS } from '../src/config.js'
import { helpText, wantsHelp } from '../src/help.js'
import { createLogger } from '../src/logger.js'
import { startCoordinator } from '../src/server.js'

async function main () {
  const argv = process.argv.slice(2)
  if (wantsHelp(argv)) {
    process.stdout.write(helpText(DESCRIPTIONS))
    return
  }
  let coordinator
  let log
  try {
    const options = optionsFrom(argv, process.env)
    const { logLevel, logIps } = resolveConfig(options)
    log = createLogger({ level: logLevel, logIps })
    coordinator = await startCoordinator(options, { log })
  } catch (err) {
    console.error(`maygh-coordinator: ${err.code ?? err.name}: ${err.message} (--help lists the options)`)
    process.exit(2)
  }
  // SIGTERM (what orchestrators send) drains: clients move to the other
  // coordinators over DRAIN_WINDOW_MS, then the process exits. A second signal,
  // or SIGINT, stops at once (clients reconnect elsewhere).
  let stopping = false
  const stop = async (/** @type {boolean} */ drain) => {
    if (stopping) process.exit(1)
    stopping = true
    log.info({ drain }, 'stopping')
    if (drain) await coordinator.drain(coordinator.config.drainWindowMs)
    await coordinator.close()
    log.info('stopped')
    process.exit(0)
  }
  process.on('SIGINT', () => stop(false))
  process.on('SIGTERM', () => stop(true))
}

main()
