/**
 * The one errors registry: every code the project has (coordinator, client,
 * simulator, demo site), each once, keyed by its code, with its message and,
 * where it has one, the WebSocket close code, HTTP status or process exit
 * status it goes with. `area` says which document lists it: README.md "Error
 * codes" (coordinator, client, cli), docs/simulator.md (sim),
 * demo-site/README.md (demo); a test keeps the registry and the documents in
 * step both ways.
 *
 * Plain ESM with no Node-only imports: the browser bundle includes it.
 */

/**
 * @typedef {'coordinator' | 'client' | 'cli' | 'sim' | 'demo'} ErrorArea
 * @typedef {object} ErrorSpec
 * @property {string} code stable, `MGH_…`; the key it has in {@link ERRORS}
 * @property {string} message what went wrong, for people
 * @property {ErrorArea} area which component raises it
 * @property {number} [close] WebSocket close code, when the error ends the connection
 * @property {number} [status] HTTP status, when an HTTP response carries it
 * @property {number} [exit] process exit status, when a command stops on it
 */

/**
 * One area's table: each code with its message, or its message and the
 * close code / status / exit status it goes with.
 * @template {string} K
 * @param {ErrorArea} area
 * @param {{ close?: number, status?: number, exit?: number }} common fields every code of the area has
 * @param {Record<K, string | [string, { close?: number, status?: number }]>} table
 * @returns {Readonly<Record<K, ErrorSpec>>}
 */
function defineArea (area, common, table) {
  /** @type {Record<string, ErrorSpec>} */
  const specs = {}
  for (const [code, entry] of Object.entries(table)) {
    const [message, extra] = typeof entry === 'string' ? [entry, {}] : /** @type {[string, object]} */ (entry)
    specs[code] = Object.freeze({ code, message, area, ...common, ...extra })
  }
  return /** @type {Readonly<Record<K, ErrorSpec>>} */ (Object.freeze(specs))
}

// Each table is its own pure constant, so a bundle carries only the areas it
// names: the browser client takes CLIENT_ERRORS and none of the others.

/** Coordinator errors: sent as `{type: 'error', code, message, ref?}`; the connection carries on. */
export const COORDINATOR_ERRORS = /* @__PURE__ */ defineArea('coordinator', {}, {
  MGH_ERR_BAD_JSON: 'message is not valid JSON',
  MGH_ERR_BAD_MESSAGE: 'message is not a JSON object with a string "type"',
  MGH_ERR_BAD_VERSION: 'unsupported protocol version',
  MGH_ERR_UNKNOWN_TYPE: 'unknown message type',
  MGH_ERR_BAD_FIELD: 'a field is missing or has the wrong type',
  MGH_ERR_TOO_LARGE: 'message exceeds the size limit',
  MGH_ERR_TOO_MANY_ASSETS: 'peer would hold more assets than the coordinator tracks per peer',
  MGH_ERR_NOT_JOINED: 'send join before any other message',
  MGH_ERR_ALREADY_JOINED: 'this connection has already joined',
  MGH_ERR_UNKNOWN_PEER: 'no online peer has that id',
  MGH_ERR_RATE_LIMITED: ['too many messages; slow down (further ones are dropped unread)', { close: 1008, status: 429 }],
  MGH_ERR_CAPACITY: ['the coordinator is at capacity; try another', { status: 503 }],
  MGH_ERR_TOO_MANY_CONNECTIONS: ['too many connections from this address', { status: 429 }],
  MGH_ERR_JOIN_DEADLINE: ['no join in time', { close: 1008 }],
  MGH_ERR_SLOW_READER: ['socket not read fast enough', { close: 1008 }],
  MGH_ERR_STORE: ['the coordinator store failed; try again', { status: 503 }],
  MGH_ERR_HTTP_NOT_FOUND: ['no such HTTP endpoint (try /healthz, /readyz, /stats, /usage, /held, /metrics or /dashboard)', { status: 404 }],
  MGH_ERR_HTTP_METHOD: ['the coordinator\'s HTTP endpoints are read-only: GET or HEAD only', { status: 405 }],
  MGH_ERR_HTTP_BAD_QUERY: ['bad query: /usage takes site (a page origin) and minutes (an integer from 1 to 44640); /held takes hashes (1 to 64 SRI sha256 names, comma separated)', { status: 400 }],
  MGH_ERR_SHUTTING_DOWN: ['coordinator is shutting down; reconnect', { close: 1012 }],
  MGH_ERR_DRAINING: ['coordinator is draining; join one of the alternates', { close: 1012 }],
  MGH_ERR_ORIGIN_NOT_ALLOWED: ['this coordinator does not serve pages of this origin', { close: 1008, status: 403 }],
  MGH_ERR_TOKEN_MISSING: ['join needs a token from the site (data-token)', { close: 1008 }],
  MGH_ERR_TOKEN_INVALID: ['join token is malformed or not signed by a secret of this coordinator', { close: 1008 }],
  MGH_ERR_TOKEN_EXPIRED: ['join token has expired; reload the page for a fresh one', { close: 1008 }],
  MGH_ERR_TOKEN_ORIGIN: ['join token was issued for another origin', { close: 1008 }],
  MGH_ERR_NOT_INTRODUCED: 'no lookup introduced these two peers (or the introduction has expired)',
  MGH_ERR_SIGNAL_BUDGET: 'signals between these two peers exceed what one introduction allows',
  MGH_ERR_RELAY_ONLY: 'this coordinator passes on relay candidates only (privacy mode: peers reach each other through its TURN relay)'
})

/** Client errors: carried in `err.code` and in `error` / `reject` events; each ends one attempt. */
export const CLIENT_ERRORS = /* @__PURE__ */ defineArea('client', {}, {
  MGH_ERR_OFFLINE: 'not connected to a coordinator',
  MGH_ERR_REQUEST_TIMEOUT: 'the coordinator did not answer in time',
  MGH_ERR_CONNECT_TIMEOUT: 'peer connection did not open in time',
  MGH_ERR_CONNECT_FAILED: 'peer connection failed',
  MGH_ERR_CHANNEL_CLOSED: 'peer channel closed',
  MGH_ERR_STALL: 'peer sent no bytes for too long',
  MGH_ERR_MISS: 'peer does not hold the asset',
  MGH_ERR_PEER_PROTOCOL: 'peer broke the data-channel protocol',
  MGH_ERR_HASH_MISMATCH: 'bytes do not match their SHA-256 name',
  MGH_ERR_ORIGIN: 'origin fetch failed',
  MGH_ERR_INTERNAL: 'client bug (please report it); the load went to the origin'
})

/** Simulator errors: the CLI prints `maygh-sim: CODE: message` and exits with status 2. */
export const SIM_ERRORS = /* @__PURE__ */ defineArea('sim', { exit: 2 }, {
  MGH_SIM_ERR_BAD_FLAG: 'unknown or malformed command-line flag',
  MGH_SIM_ERR_BAD_VALUE: 'an option has an invalid value',
  MGH_SIM_ERR_NO_INPUT: 'give exactly one of --trace FILE or --synthetic etsy',
  MGH_SIM_ERR_TRACE_OPEN: 'cannot read the trace file',
  MGH_SIM_ERR_FORMAT: 'cannot recognise the trace format; pass --format clf|epa|csv',
  MGH_SIM_ERR_CSV_HEADER: 'the CSV header lacks a required column (ts_unix,client,url,status,bytes[,method])',
  MGH_SIM_ERR_ZIP: 'unsupported or damaged zip archive',
  MGH_SIM_ERR_DECOMPRESS: 'the compressed trace is corrupt or truncated',
  MGH_SIM_ERR_EMPTY: 'the input holds no valid request',
  MGH_SIM_ERR_UNSORTED: 'the trace is not in time order beyond --order-tolerance; run with --sort',
  MGH_SIM_ERR_SORT: 'cannot sort the trace on disk (temporary directory)',
  MGH_SIM_ERR_SWEEP: 'bad --sweep; use NAME=V1,V2,… with a numeric model option',
  MGH_SIM_ERR_REPORT: 'cannot write the HTML report'
})

/**
 * Command-line errors of maygh-coordinator, maygh-token and maygh-manifest:
 * the command prints `PROGRAM: CODE: message` on stderr and exits with status 2.
 * (maygh-sim has codes of its own, SIM_ERRORS, in the same form.)
 */
export const CLI_ERRORS = /* @__PURE__ */ defineArea('cli', { exit: 2 }, {
  MGH_CLI_ERR_BAD_FLAG: 'bad command-line flag',
  MGH_CLI_ERR_BAD_VALUE: 'bad value of a flag or environment variable',
  MGH_CLI_ERR_MISSING: 'a required flag, argument or environment variable is missing',
  MGH_CLI_ERR_FILE: 'cannot read or write a file or folder'
})

/** Demo-site errors: a JSON body `{error: {code, message}}` with the status. */
export const DEMO_ERRORS = /* @__PURE__ */ defineArea('demo', {}, {
  MGH_DEMO_NOT_FOUND: ['no such page or asset', { status: 404 }],
  MGH_DEMO_BAD_PATH: ['malformed path (bad escape, "..", "." or backslash segment)', { status: 400 }],
  MGH_DEMO_METHOD_NOT_ALLOWED: ['method not allowed here', { status: 405 }],
  MGH_DEMO_CLIENT_NOT_BUILT: ['the Maygh client bundle is not built yet; run `npm run build`', { status: 503 }]
})

/**
 * The areas' tables as one.
 * @template A, B, C, D, E
 * @param {A} a @param {B} b @param {C} c @param {D} d @param {E} e
 * @returns {Readonly<A & B & C & D & E>}
 */
function merge (a, b, c, d, e) {
  return Object.freeze({ ...a, ...b, ...c, ...d, ...e })
}

/** The whole registry; a code appears in exactly one area (a test checks). */
export const ERRORS = /* @__PURE__ */ merge(COORDINATOR_ERRORS, CLIENT_ERRORS, CLI_ERRORS, SIM_ERRORS, DEMO_ERRORS)

/** @typedef {keyof typeof ERRORS} ErrorCode */

/**
 * An error with a stable code from the registry: what every part of the
 * project throws for anything a user, a client or a peer can cause. Takes the
 * registry entry itself (`new MayghError(ERRORS.MGH_ERR_STORE)`), so a typo
 * is a type error and a bundle carries only the tables it names.
 */
export class MayghError extends Error {
  /**
   * @param {ErrorSpec} spec an entry of {@link ERRORS} (or of one area's table)
   * @param {string} [detail] what exactly was wrong, appended to the registry message
   * @param {{ cause?: unknown }} [options]
   */
  constructor (spec, detail, options) {
    super(detail ? `${spec.message}: ${detail}` : spec.message, options)
    this.name = 'MayghError'
    this.code = spec.code
    /** WebSocket close code when the error ends a connection */
    this.close = spec.close
    /** HTTP status when a response carries it */
    this.status = spec.status
    /** process exit status when a command stops on it */
    this.exit = spec.exit
  }
}
