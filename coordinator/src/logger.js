/**
 * Structured logs: one JSON object a line (pino), to stdout unless told
 * otherwise. A client's IP address is personal data, so none is logged unless
 * the operator asks (`logIps`): `clientAddress()` hands it out only then, and
 * redaction blanks `ip` / `remoteAddress` fields in case one slips through.
 *
 * A misbehaving client can send thousands of bad frames; `logClientError()`
 * logs the first of each code per connection and counts the rest, so one
 * client cannot flood the log.
 */
import { pino } from 'pino'
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

/**
 * @param {object} [options]
 * @param {string} [options.level] one of {@link LEVELS} (the bin passes the `logLevel` option)
 * @param {boolean} [options.logIps] log client addresses (default false)
 * @param {import('pino').DestinationStream} [options.destination] where lines go
 *   (anything with `write(line)`); default stdout
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
  return destination === undefined ? pino(options) : pino(options, destination)
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
