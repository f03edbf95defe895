/**
 * How fast this machine runs right now: the time one core takes for a fixed
 * piece of work of the kinds the benches spend their CPU on (JSON of
 * protocol-sized messages, SHA-256 of image-sized buffers, Map churn), so
 * that figures measured on different days can be told apart from the
 * machine's own speed. This shared 2-core machine has run the same code
 * from one day to the next at half or twice the speed (README "Measured
 * results"): a ratio measured within one run stands, an absolute figure
 * needs the machine's speed beside it.
 *
 * `machineSpeed()` returns the median of a few timed runs after a warm-up,
 * in ms (lower is faster). Benches print it at their start and end
 * (`machineSpeedSpan`), since the machine may change during a run:
 *
 *   node bench/machine-speed.js      prints one JSON line: {"referenceMs": …, "runsMs": […]}
 */
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { median } from './stats.js'

/** A lookup-with-offer sized message, as the coordinator parses and writes them. */
const MESSAGE = JSON.stringify({
  v: 4,
  type: 'lookup',
  ref: 1234,
  hashes: Array.from({ length: 4 }, (_, i) => `sha256-${Buffer.alloc(32, i).toString('base64')}`),
  offers: [{ cid: 'c0ffee1234', type: 'offer', sdp: 'v=0\r\n'.repeat(60) }]
})
/** An image-sized buffer, as the client hashes every asset it gets. */
const IMAGE = Buffer.alloc(96 << 10, 7)

/** One unit of the reference work. @returns {number} something of it, so nothing is optimised away */
function unit () {
  let n = 0
  for (let i = 0; i < 400; i++) n += JSON.stringify(JSON.parse(MESSAGE)).length
  for (let i = 0; i < 8; i++) n += createHash('sha256').update(IMAGE).digest()[0]
  /** @type {Map<string, number>} */
  const map = new Map()
  for (let i = 0; i < 4000; i++) {
    map.set(`peer-${i % 512}`, i)
    if (map.size > 256) map.delete(/** @type {string} */ (map.keys().next().value))
  }
  return n + map.size
}

/**
 * @param {{ runs?: number, units?: number }} [o] timed runs (median taken) and units per run
 * @returns {{ referenceMs: number, runsMs: number[] }} the median run's ms, and every run's
 */
export function machineSpeed ({ runs = 5, units = 40 } = {}) {
  let sink = 0
  for (let i = 0; i < units; i++) sink += unit()
  /** @type {number[]} */
  const runsMs = []
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now()
    for (let i = 0; i < units; i++) sink += unit()
    runsMs.push(Math.round((performance.now() - t0) * 10) / 10)
  }
  if (sink < 0) throw new Error('unreachable')
  return { referenceMs: median(runsMs), runsMs }
}

/**
 * A bench's run measured beside the machine's speed: taken now (and logged),
 * and again by the function returned, at the run's end.
 * @param {(line: string) => void} log
 * @returns {() => { referenceMs: { before: number, after: number } }} the speed before and after, for the bench's JSON
 */
export function machineSpeedSpan (log) {
  const before = machineSpeed().referenceMs
  log(`machine: ${before} ms for the reference work (bench/machine-speed.js; lower is faster)`)
  return () => {
    const after = machineSpeed().referenceMs
    log(`machine: ${after} ms for the reference work at the end`)
    return { referenceMs: { before, after } }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify(machineSpeed()))
