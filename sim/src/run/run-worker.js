/**
 * One simulation run in a worker thread, for run-pool.js: reads
 * `{ source, config, plugin }` from workerData, replays it, and posts
 * progress (at most ten times a second), then the result or the error.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { resolveConfig } from '../config.js'
import { runSimulation } from './run.js'
import { answerParent } from '../worker-protocol.js'

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)
let lastPost = 0

await answerParent(() => {
  const { source, config, plugin } = workerData
  return runSimulation(source, resolveConfig(config), {
    plugin,
    onProgress: (fraction, requests) => {
      const now = performance.now()
      if (now - lastPost < 100) return
      lastPost = now
      port.postMessage({ type: 'progress', fraction, requests })
    }
  })
})
