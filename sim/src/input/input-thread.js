/**
 * The input stage (input.js) in a worker thread of its own, so that reading
 * or generating the next requests overlaps replaying the last ones: the
 * worker fills a shared-memory ring (batch-ring.js) and this thread's sink
 * reads each batch in place. The sink sees exactly the batches, in exactly
 * the order, that `feedInput` in this thread would give it.
 */
import { Worker } from 'node:worker_threads'
import { BatchRing, RING_FAILED } from './batch-ring.js'
import { workerResult } from '../worker-protocol.js'

const WORKER_URL = new URL('./input-worker.js', import.meta.url)

/**
 * {@link import('./input.js').feedInput} with the reading done in a worker.
 * @param {import('./input.js').SourceSpec} source
 * @param {Readonly<import('../config.js').SimConfig>} config
 * @param {(batch: import('../batch.js').RequestBatch) => void} sink
 * @param {{ onProgress?: (fraction: number, requests: number) => void }} [options]
 * @returns {Promise<import('./input.js').InputSummary>}
 */
export async function feedInputThreaded (source, config, sink, options = {}) {
  const ring = new BatchRing()
  const worker = new Worker(WORKER_URL, { workerData: { source, config: { ...config }, ring: ring.buffers } })
  /** @type {Promise<import('./input.js').InputSummary>} */
  const summary = workerResult(worker)
  // a worker that fails, however, stops the consumer below; the failure itself is thrown by `await summary`
  summary.catch(() => ring.end(RING_FAILED))
  const onProgress = options.onProgress
  try {
    await ring.consume(sink, {
      yieldEvery: onProgress ? 16 : Infinity,
      onBatch: onProgress && (() => onProgress(ring.progress[0], ring.progress[1]))
    })
    return await summary
  } finally {
    await worker.terminate()
  }
}
