/**
 * Structured logs: one JSON object a line (pino), to stdout unless told
 * otherwise. A client's IP address is personal data, so none is logged unless
 * the operator asks (`logIps`): `clientAddress()` hands it out only then, and
 * redaction blanks `ip` / `remoteAddress` fields in case one slips through.
 *
 * A misbehaving client can send thousands of bad frames; `logClientError()`
 * logs the first of each code per connection and counts the rest, so one
 * client cannot flood the log.
 *
 * Where lines go must never keep the process from running or from stopping:
 * `logDestination()` gives up on an output that fails (see there why pino's
 * default destination is not used).
 */
import { pino } from 'pino'
import sonicBoom from 'sonic-boom'
import { MayghError } from '../../protocol/index.js'

/** Most to least severe; `silent` logs nothing. */
export const LEVELS = Object.freeze(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])

/**
 * Fields that may hold a client address, at the top of a log object or one
 * level down (`{ req: { remoteAddress } }`), and the proxy headers that carry one.
 */
const ADDRESS_PATHS = Object.freeze([
  'ip', 'remoteAddress', '*.ip', '*.remoteAddress',
  'req.socket.remoteAddress', 'req.headers["x-forwarded-for"]', 'req.headers["x-real-ip"]', 'req.headers.forwarded',
  'headers["x-forwarded-for"]', 'headers["x-real-ip"]', 'headers.forwarded'
])

/** @typedef {import('pino').Logger} Logger */

// A CommonJS module: its default import is the class, which also carries itself as `SonicBoom` (what its types declare).
const { SonicBoom } = sonicBoom

/** Bytes of lines a slow reader may leave queued; lines past it are dropped until it catches up. */
export const MAX_QUEUED_LOG_BYTES = 16 * 1024 * 1024

/**
 * @typedef {object} LogDestination
 * @property {(line: string) => void} write queue a line; never throws, never blocks
 * @property {(timeoutMs: number) => Promise<void>} end stop taking lines and resolve once those
 *   queued are written, the output has failed, or `timeoutMs` has passed, whichever comes first
 * @property {() => Error | null} failure the error the output failed with, if it has
 */

/**
 * Where the coordinator's lines go: a file descriptor (stdout), written
 * asynchronously through sonic-boom, pino's own destination, so that a slow
 * reader never holds up the event loop. An output that fails (its reader gone:
 * EPIPE; a full disk: ENOSPC; anything else) is given up at its first error:
 * `onFailure` hears of it once, and lines from then on are dropped.
 *
 * Why not pino's default destination: it registers an exit hook that calls
 * sonic-boom's `flushSync()`, which retries a failing write every 100 ms
 * forever (it throws only for EAGAIN it was told not to retry), synchronously,
 * inside `process.exit()`. Once stdout failed, a coordinator that exited with
 * lines still queued (SIGTERM after `| head` had gone), or that crashed on the
 * destination's unhandled ENOSPC `error` at start, hung there, deaf to every
 * further signal, until SIGKILL. This one has no exit hook: the bin awaits
 * `end()` before it exits.
 *
 * @param {object} [options]
 * @param {number} [options.fd] the file descriptor written (default 1, stdout)
 * @param {(err: Error) => void} [options.onFailure] called once, when the output fails
 * @param {number} [options.maxQueuedBytes] see {@link MAX_QUEUED_LOG_BYTES}
 * @returns {LogDestination}
 */
export function logDestination ({ fd = 1, onFailure, maxQueuedBytes = MAX_QUEUED_LOG_BYTES } = {}) {
  const sonic = new SonicBoom({ fd, sync: false, maxLength: maxQueuedBytes })
  /** @type {Error | null} */
  let failure = null
  /** @type {Promise<void> | null} */
  let ended = null
  /** @type {(() => void) | null} */
  let wake = null
  sonic.on('error', (/** @type {Error} */ err) => {
    if (failure !== null) return
    failure = err
    wake?.()
    onFailure?.(err)
  })
  return {
    write (line) {
      if (failure === null && ended === null) sonic.write(line)
    },
    end (timeoutMs) {
      ended ??= new Promise((resolve) => {
        if (failure !== null) return resolve()
        const timer = setTimeout(done, timeoutMs)
        function done () {
          clearTimeout(timer)
          wake = null
          resolve()
        }
        wake = done
        // 'close' comes once every queued line is written (fd 1 and 2 are left open)
        sonic.once('close', done)
        sonic.end()
      })
      return ended
    },
    failure: () => failure
  }
}

/**
 * @param {object} [options]
 * @param {string} [options.level] one of {@link LEVELS} (the bin passes the `logLevel` option)
 * @param {boolean} [options.logIps] log client addresses (default false)
 * @param {import('pino').DestinationStream} [options.destination] where lines go
 *   (anything with `write(line)`); default {@link logDestination}, stdout
 * @returns {Logger}
 * @throws {TypeError} on a level not in {@link LEVELS}
 */
export function createLogger ({ level = 'info', logIps = false, destination } = {}) {
  if (!LEVELS.includes(level)) throw new TypeError(`log level must be one of ${LEVELS.join(', ')}, got ${JSON.stringify(level)}`)
  /** @type {import('pino').LoggerOptions} */
  const options = {
    level,
    // `"level":"warn"` rather than 40: readable in any log viewer, grep included
    formatters: { level: (label) => ({ level: label }) },
    redact: logIps ? undefined : { paths: [...ADDRESS_PATHS], censor: '[redacted]' }
  }
  return pino(options, destination ?? (level === 'silent' ? { write () {} } : logDestination()))
}

/**
 * A request's remote address, only when addresses may be logged.
 * Log it as `{ ip: clientAddress(req, logIps) }`: an undefined field is left out.
 *
 * @param {{ socket?: { remoteAddress?: string } }} req an HTTP request (the WebSocket upgrade's)
 * @param {boolean} logIps
 * @returns {string | undefined}
 */
export function clientAddress (req, logIps) {
  return logIps ? req.socket?.remoteAddress : undefined
}

/**
 * What a connection keeps for {@link logClientError}: its serial number, its
 * peer id once joined, and a map of the codes it has had, made on the first
 * (most connections never have one).
 * @typedef {object} ConnectionLogState
 * @property {number | string} id this connection's serial number on this coordinator
 * @property {string | null} peerId
 * @property {Map<string, number> | null} errorCounts code → times seen; null until the first
 */

/**
 * Log a client's error at `warn` the first time its connection has that code,
 * with the connection's id and peer id (never its address); later ones are only
 * counted, for {@link repeatedErrors}. A failure that is not a MayghError (the
 * store's, replied as MGH_ERR_STORE) is logged with its stack.
 *
 * @param {Logger} log
 * @param {ConnectionLogState} connection
 * @param {string} code the code replied (or the close reason's code)
 * @param {unknown} [err] what was thrown
 * @returns {boolean} whether this one was logged
 */
export function logClientError (log, connection, code, err) {
  const counts = (connection.errorCounts ??= new Map())
  const seen = counts.get(code) ?? 0
  counts.set(code, seen + 1)
  if (seen > 0) return false
  const fields = { conn: connection.id, peer: connection.peerId ?? undefined, code }
  if (err instanceof MayghError || !(err instanceof Error)) {
    log.warn(fields, err instanceof Error ? err.message : 'client error')
  } else {
    log.warn({ ...fields, err }, err.message)
  }
  return true
}

/**
 * The errors {@link logClientError} counted without logging, for the line that
 * records the connection's close.
 *
 * @param {ConnectionLogState} connection
 * @returns {Record<string, number> | undefined} code → repeats not logged; undefined when none
 */
export function repeatedErrors (connection) {
  if (connection.errorCounts === null) return undefined
  /** @type {Record<string, number>} */
  const repeats = {}
  let any = false
  for (const [code, times] of connection.errorCounts) {
    if (times > 1) {
      repeats[code] = times - 1
      any = true
    }
  }
  return any ? repeats : undefined
}
