/**
 * The input stage in a worker thread, for input-thread.js: reads the source
 * named in workerData through the session window into the shared ring, then
 * posts what it read (or the error) and marks the ring done (or failed).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { BatchRing, RING_DONE, RING_FAILED } from './batch-ring.js'
import { resolveConfig } from './config.js'
import { errorMessage } from './errors.js'
import { feedInput } from './input.js'

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)
const ring = new BatchRing({ buffers: workerData.ring })

try {
  const summary = await feedInput(workerData.source, resolveConfig(workerData.config), (batch) => ring.publish(batch), {
    onProgress: (fraction, requests) => {
      ring.progress[0] = fraction
      ring.progress[1] = requests
    }
  })
  port.postMessage({ type: 'end', summary })
  ring.end(RING_DONE)
} catch (err) {
  port.postMessage(errorMessage(err))
  ring.end(RING_FAILED)
}
