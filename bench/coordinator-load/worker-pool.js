/**
 * The main thread's side of the load workers: starts them, sends each a
 * command and resolves with its answer (see worker.js), and fails every call
 * in flight when a worker dies.
 */
import { Worker } from 'node:worker_threads'

const WORKER_URL = new URL('./worker.js', import.meta.url)

export class WorkerPool {
  /**
   * @param {number} size
   * @param {Pick<import('./options.js').Options, 'assets' | 'server' | 'signal' | 'workload' | 'pageAssets' | 'pageOffers'>} data every worker's workerData
   */
  constructor (size, data) {
    this.nextId = 1
    /** @type {Map<number, { resolve: (result: any) => void, reject: (err: Error) => void }>[]} calls in flight, per worker */
    this.calls = []
    this.workers = Array.from({ length: size }, (_, index) => {
      const worker = new Worker(WORKER_URL, { workerData: data })
      const calls = new Map()
      this.calls.push(calls)
      worker.on('message', ({ id, result, error }) => {
        const call = calls.get(id)
        calls.delete(id)
        if (error === undefined) call?.resolve(result)
        else call?.reject(new Error(`worker ${index}: ${error}`))
      })
      const fail = (/** @type {Error} */ err) => {
        for (const call of calls.values()) call.reject(err)
        calls.clear()
      }
      worker.on('error', (err) => fail(new Error(`worker ${index} failed: ${err.message}`)))
      worker.on('exit', (code) => fail(new Error(`worker ${index} exited (code ${code})`)))
      return worker
    })
  }

  /**
   * @param {number} index the worker
   * @param {string} command a key of worker.js's COMMANDS
   * @param {object} [args]
   * @returns {Promise<any>} the command's result
   */
  call (index, command, args = {}) {
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.calls[index].set(id, { resolve, reject })
      this.workers[index].postMessage({ id, command, args })
    })
  }

  async terminate () {
    await Promise.all(this.workers.map((w) => w.terminate()))
  }
}
