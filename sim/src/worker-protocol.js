/**
 * How the simulator's worker threads answer their parent: any number of
 * `{ type: 'progress', … }` messages, then one `{ type: 'result', result }` or
 * one `{ type: 'error', … }`. A MayghError crosses with its code and message
 * intact; anything else with its stack. run-worker.js and input-worker.js
 * answer this way; run-pool.js and input-thread.js wait for the answer.
 */
import { parentPort } from 'node:worker_threads'
import { ERRORS, MayghError } from '../../protocol/index.js'

/**
 * Worker side: runs `work` and posts its result, or the error it threw.
 * @param {() => Promise<unknown>} work
 */
export async function answerParent (work) {
  const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)
  try {
    port.postMessage({ type: 'result', result: await work() })
  } catch (err) {
    port.postMessage(errorMessage(err))
  }
}

/**
 * Parent side: the worker's result, or its error as it was thrown there. A
 * worker that crashes or exits without answering rejects too.
 * @template T
 * @param {import('node:worker_threads').Worker} worker
 * @param {(msg: any) => void} [onProgress] receives each progress message
 * @returns {Promise<T>}
 */
export function workerResult (worker, onProgress) {
  return new Promise((resolve, reject) => {
    worker.on('message', (msg) => {
      if (msg.type === 'progress') onProgress?.(msg)
      else if (msg.type === 'result') resolve(msg.result)
      else reject(reviveError(msg))
    })
    worker.on('error', reject)
    worker.on('exit', (code) => reject(new Error(`simulation worker exited with code ${code} before it answered`)))
  })
}

/**
 * @param {unknown} err
 * @returns {{ type: 'error', code?: string, message: string, stack?: string }}
 */
function errorMessage (err) {
  if (err instanceof MayghError) return { type: 'error', code: err.code, message: err.message }
  const e = /** @type {Error} */ (err)
  return { type: 'error', message: String(e?.message ?? err), stack: e?.stack }
}

/**
 * @param {{ code?: string, message: string, stack?: string }} msg
 * @returns {Error}
 */
function reviveError (msg) {
  if (msg.code !== undefined && Object.hasOwn(ERRORS, msg.code)) {
    const err = new MayghError(ERRORS[/** @type {keyof typeof ERRORS} */ (msg.code)])
    err.message = msg.message
    return err
  }
  const err = new Error(msg.message)
  if (msg.stack) err.stack = msg.stack
  return err
}
