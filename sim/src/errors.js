/**
 * The simulator's errors registry. Every error a user can cause (bad flag, bad
 * value, unreadable trace) has a stable code listed here and in
 * docs/simulator.md ("Error codes"); a test keeps the two in step. The CLI
 * prints `code: message` and exits with status 2, never a stack trace.
 */

/** @typedef {{ code: string, message: string }} SimErrorSpec */

/** @type {Readonly<Record<string, SimErrorSpec>>} */
export const SIM_ERRORS = Object.freeze({
  MGH_SIM_ERR_BAD_FLAG: { code: 'MGH_SIM_ERR_BAD_FLAG', message: 'unknown or malformed command-line flag' },
  MGH_SIM_ERR_BAD_VALUE: { code: 'MGH_SIM_ERR_BAD_VALUE', message: 'an option has an invalid value' },
  MGH_SIM_ERR_NO_INPUT: { code: 'MGH_SIM_ERR_NO_INPUT', message: 'give exactly one of --trace FILE or --synthetic etsy' },
  MGH_SIM_ERR_TRACE_OPEN: { code: 'MGH_SIM_ERR_TRACE_OPEN', message: 'cannot read the trace file' },
  MGH_SIM_ERR_FORMAT: { code: 'MGH_SIM_ERR_FORMAT', message: 'cannot recognise the trace format; pass --format clf|epa|csv' },
  MGH_SIM_ERR_CSV_HEADER: { code: 'MGH_SIM_ERR_CSV_HEADER', message: 'the CSV header lacks a required column (ts_unix,client,url,status,bytes[,method])' },
  MGH_SIM_ERR_ZIP: { code: 'MGH_SIM_ERR_ZIP', message: 'unsupported or damaged zip archive' },
  MGH_SIM_ERR_DECOMPRESS: { code: 'MGH_SIM_ERR_DECOMPRESS', message: 'the compressed trace is corrupt or truncated' },
  MGH_SIM_ERR_EMPTY: { code: 'MGH_SIM_ERR_EMPTY', message: 'the input holds no valid request' },
  MGH_SIM_ERR_SWEEP: { code: 'MGH_SIM_ERR_SWEEP', message: 'bad --sweep; use NAME=V1,V2,… with a numeric model option' },
  MGH_SIM_ERR_REPORT: { code: 'MGH_SIM_ERR_REPORT', message: 'cannot write the HTML report' }
})

/** An error with a stable code from {@link SIM_ERRORS}. */
export class SimError extends Error {
  /**
   * @param {keyof typeof SIM_ERRORS} code
   * @param {string} [detail] what exactly was wrong, appended to the registry message
   * @param {{ cause?: unknown }} [options]
   */
  constructor (code, detail, options) {
    const spec = SIM_ERRORS[code]
    if (spec === undefined) throw new TypeError(`unknown error code ${code}`)
    super(detail ? `${spec.message}: ${detail}` : spec.message, options)
    this.name = 'SimError'
    this.code = spec.code
  }
}
