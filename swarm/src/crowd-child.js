/**
 * The child side of crowd-process.js: takes one run's options, runs the
 * crowd, sends back its result (or its error), and ends. If its parent goes
 * away first, it ends its whole process group (itself, Redis, browsers).
 */
import { runCrowd } from './crowd.js'

const send = (/** @type {any} */ m) => new Promise((resolve) => process.send?.(m, undefined, {}, resolve))

process.once('disconnect', () => { try { process.kill(-process.pid, 'SIGKILL') } catch {} })
process.once('message', async (/** @type {any} */ m) => {
  try {
    const log = m.log ? (/** @type {string} */ line) => { process.send?.({ log: line }) } : undefined
    await send({ result: await runCrowd({ ...m.options, log }) })
  } catch (err) {
    const e = /** @type {any} */ (err)
    await send({ error: { message: String(e?.message ?? e), code: e?.code, stack: e?.stack } })
  }
  process.exit(0)
})
