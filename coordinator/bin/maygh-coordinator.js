#!/usr/bin/env node
/**
 * maygh-coordinator: runs one coordinator shard. Options come from flags, then
 * environment variables, then the defaults (README.md, "Configuration";
 * `--help` lists them). Logs are JSON lines on stdout (pino), at `LOG_LEVEL`.
 */
import { optionsFrom } from '../src/cli-options.js'
import { resolveConfig, DESCRIPTIONS } from '../src/config.js'
import { helpText, wantsHelp } from '../src/help.js'
import { createLogger, logDestination } from '../src/logger.js'
import { startCoordinator } from '../src/server.js'

/** The longest the lines still queued at exit may take to be written. */
const LOG_FLUSH_MS = 2000

async function main () {
  const argv = process.argv.slice(2)
  if (wantsHelp(argv)) {
    process.stdout.write(helpText(DESCRIPTIONS))
    return
  }
  // Output that nobody reads any more (a closed pipe, a full disk) must not
  // stop the coordinator, nor its stopping: the logs give such an output up
  // (logDestination), and a line to stderr that cannot be written is dropped.
  process.stderr.on('error', () => {})
  const destination = logDestination({
    onFailure: (err) => process.stderr.write(`maygh-coordinator: cannot write logs to stdout (${/** @type {NodeJS.ErrnoException} */ (err).code ?? err.message}); log lines are dropped from now on\n`)
  })
  let coordinator
  let log
  try {
    const options = optionsFrom(argv, process.env)
    const { logLevel, logIps } = resolveConfig(options)
    log = createLogger({ level: logLevel, logIps, destination })
    coordinator = await startCoordinator(options, { log })
  } catch (err) {
    console.error(`maygh-coordinator: ${err.code ?? err.name}: ${err.message} (--help lists the options)`)
    await destination.end(LOG_FLUSH_MS)
    process.exit(2)
  }
  // SIGTERM (what orchestrators send) drains: clients move to the other
  // coordinators over DRAIN_WINDOW_MS, then the process exits. A second signal,
  // or SIGINT, stops at once (clients reconnect elsewhere).
  let stopping = false
  const stop = async (/** @type {boolean} */ drain) => {
    if (stopping) process.exit(1)
    stopping = true
    let status = 0
    try {
      log.info({ drain }, 'stopping')
      if (drain) await coordinator.drain(coordinator.config.drainWindowMs)
      await coordinator.close()
      log.info('stopped')
    } catch (err) {
      log.error({ err }, 'stopping failed')
      status = 1
    }
    await destination.end(LOG_FLUSH_MS)
    process.exit(status)
  }
  process.on('SIGINT', () => stop(false))
  process.on('SIGTERM', () => stop(true))
}

main()
