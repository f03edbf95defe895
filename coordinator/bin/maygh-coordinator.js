#!/usr/bin/env node
/**
 * maygh-coordinator: runs one coordinator shard. Options come from flags, then
 * environment variables, then the defaults (README.md, "Configuration";
 * `--help` lists them). Logs are JSON lines on stdout (pino), at `LOG_LEVEL`.
 * Bad flags and values print `maygh-coordinator: CODE: message` on stderr,
 * naming the flag or environment variable, and exit with status 2.
 */
import { CLI_ERRORS, MayghError, commandError } from '../../protocol/index.js'
import { readOptions } from '../src/cli-options.js'
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
    const { options, nameOf } = readOptions(argv, process.env)
    const { logLevel, logIps } = checked(() => resolveConfig(options, { nameOf }))
    log = createLogger({ level: logLevel, logIps, destination })
    coordinator = await startCoordinator(options, { log })
  } catch (err) {
    // Bad input has a code; so has a port in use. A store that cannot be
    // reached (ioredis: "Connection is closed.") has none, and is no bug here.
    const { line, exit } = err instanceof Error && !('code' in err)
      ? { line: `maygh-coordinator: cannot start: ${err.message}`, exit: 1 }
      : commandError('maygh-coordinator', err)
    process.stderr.write(`${line}\n`)
    await destination.end(LOG_FLUSH_MS)
    process.exit(exit)
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

/**
 * The configuration, or the reason it is impossible as a command-line error
 * (resolveConfig's TypeError, its options named as the user gave them).
 * @template T
 * @param {() => T} resolve
 * @returns {T}
 */
function checked (resolve) {
  try {
    return resolve()
  } catch (err) {
    if (!(err instanceof TypeError)) throw err
    throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_BAD_VALUE, err.message.replace(/^options? /, ''))
  }
}

main()
