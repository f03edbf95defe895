/**
 * The demo site's error codes. Every error response is JSON
 * `{ "error": { "code", "message" } }` with one of these codes and its status;
 * demo-site/README.md lists them and a test keeps the two in step.
 */

/** @type {Readonly<Record<string, { code: string, status: number, message: string }>>} */
export const DEMO_ERRORS = Object.freeze({
  MGH_DEMO_NOT_FOUND: { code: 'MGH_DEMO_NOT_FOUND', status: 404, message: 'no such page or asset' },
  MGH_DEMO_BAD_PATH: { code: 'MGH_DEMO_BAD_PATH', status: 400, message: 'malformed path (bad escape, "..", "." or backslash segment)' },
  MGH_DEMO_METHOD_NOT_ALLOWED: { code: 'MGH_DEMO_METHOD_NOT_ALLOWED', status: 405, message: 'method not allowed here' },
  MGH_DEMO_CLIENT_NOT_BUILT: { code: 'MGH_DEMO_CLIENT_NOT_BUILT', status: 503, message: 'the Maygh client bundle is not built yet; run `npm run build`' }
})

/**
 * The JSON body for an error.
 * @param {keyof typeof DEMO_ERRORS} code
 * @param {string} [detail]
 * @returns {{ status: number, body: string }}
 */
export function errorBody (code, detail) {
  const spec = DEMO_ERRORS[code]
  const message = detail ? `${spec.message}: ${detail}` : spec.message
  return { status: spec.status, body: JSON.stringify({ error: { code: spec.code, message } }) }
}
