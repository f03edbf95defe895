/**
 * The input stage in a worker thread, for input-thread.js: reads the source
 * named in workerData through the session window into the shared ring, then
 * posts what it read (or the error) and marks the ring done (or failed).
 */
import { workerData } from 'node:worker_threads'
import { BatchRing, RING_DONE, RING_FAILED } from './batch-ring.js'
import { resolveConfig } from '../config.js'
import { feedInput } from './input.js'
import { answerParent } from '../worker-protocol.js'

const ring = new BatchRing({ buffers: workerData.ring })

await answerParent(async () => {
  try {
    const summary = await feedInput(workerData.source, resolveConfig(workerData.config), (batch) => ring.publish(batch), {
      onProgress: (fraction, requests) => {
        ring.progress[0] = fraction
        ring.progress[1] = requests
      }
    })
    ring.end(RING_DONE)
    return summary
  } catch (err) {
    ring.end(RING_FAILED)
    throw err
  }
})
