/**
 * The coordinator's one errors registry. Every error a client can see has a
 * stable code listed here and in README.md ("Error codes"); a test keeps the two
 * in step. `close` is the WebSocket close code used when the error ends the
 * connection, `null` when the connection carries on after the error reply.
 */

/** @typedef {{ code: string, message: string, close: number | null }} ErrorSpec */

/** @type {Readonly<Record<string, ErrorSpec>>} */
export const ERRORS = Object.freeze({
  MGH_ERR_BAD_JSON: { code: 'MGH_ERR_BAD_JSON', message: 'message is not valid JSON', close: null },
  MGH_ERR_BAD_MESSAGE: { code: 'MGH_ERR_BAD_MESSAGE', message: 'message is not a JSON object with a string "type"', close: null },
  MGH_ERR_BAD_VERSION: { code: 'MGH_ERR_BAD_VERSION', message: 'unsupported protocol version', close: null },
  MGH_ERR_UNKNOWN_TYPE: { code: 'MGH_ERR_UNKNOWN_TYPE', message: 'unknown message type', close: null },
  MGH_ERR_BAD_FIELD: { code: 'MGH_ERR_BAD_FIELD', message: 'a field is missing or has the wrong type', close: null },
  MGH_ERR_TOO_LARGE: { code: 'MGH_ERR_TOO_LARGE', message: 'message exceeds the size limit', close: null },
  MGH_ERR_TOO_MANY_ASSETS: { code: 'MGH_ERR_TOO_MANY_ASSETS', message: 'peer would hold more assets than the coordinator tracks per peer', close: null },
  MGH_ERR_NOT_JOINED: { code: 'MGH_ERR_NOT_JOINED', message: 'send join before any other message', close: null },
  MGH_ERR_ALREADY_JOINED: { code: 'MGH_ERR_ALREADY_JOINED', message: 'this connection has already joined', close: null },
  MGH_ERR_UNKNOWN_PEER: { code: 'MGH_ERR_UNKNOWN_PEER', message: 'no online peer has that id', close: null },
  MGH_ERR_RATE_LIMITED: { code: 'MGH_ERR_RATE_LIMITED', message: 'too many messages; slow down', close: null },
  MGH_ERR_STORE: { code: 'MGH_ERR_STORE', message: 'the coordinator store failed; try again', close: null },
  MGH_ERR_HTTP_NOT_FOUND: { code: 'MGH_ERR_HTTP_NOT_FOUND', message: 'no such HTTP endpoint (try /healthz or /stats)', close: null },
  MGH_ERR_SHUTTING_DOWN: { code: 'MGH_ERR_SHUTTING_DOWN', message: 'coordinator is shutting down; reconnect', close: 1012 }
})

/** An error with a stable code from {@link ERRORS}; what handlers and the parser throw. */
export class MayghError extends Error {
  /**
   * @param {keyof typeof ERRORS} code
   * @param {string} [detail] what exactly was wrong, appended to the registry message
   */
  constructor (code, detail) {
    const spec = ERRORS[code]
    if (spec === undefined) throw new TypeError(`unknown error code ${code}`)
    super(detail ? `${spec.message}: ${detail}` : spec.message)
    this.name = 'MayghError'
    this.code = spec.code
    this.close = spec.close
  }
}
