/**
 * What a reader of the results must know about the input, said the same way
 * in the text summary and the HTML report: which requests were counted as
 * ones peers could serve and which were left out, how the input's time order
 * was handled, the time zone of the hours, and that a sampled log
 * understates savings.
 */
import { formatBinaryBytes, formatBytes, formatCount } from './format.js'

/**
 * Measured thinning (docs/simulator.md, "Sampled logs"): savings of a whole
 * log and of samples keeping 50% and 25% of its requests.
 */
export const SAMPLING_NOTE = 'A sampled log understates savings: peers can serve a request only when another visitor ' +
  'who holds the object is online, and a sample keeps fewer visitors. Thinning a real log to 50% and 25% of its requests ' +
  'cut its savings from 62% to 45% and 32%; the EPA log thinned the same way, from 11.5% to 9.4% and 7.5% ' +
  '(docs/simulator.md, "Sampled logs"). If this log is a sample, the whole log would save more.'

/**
 * @param {{ requests: number, bytes: number }} t
 * @returns {string} e.g. "12,345 requests, 300.1 MB"
 */
function tally (t) {
  return `${formatCount(t.requests)} requests, ${formatBytes(t.bytes)}`
}

/**
 * @param {Record<string, any>} r the report (toReport plus countedAndLeftOut)
 * @returns {{ counted: string, leftOut: string }} one sentence each
 */
export function countedText (r) {
  const { counted, leftOut } = r
  const why = []
  if (leftOut.notServable.requests > 0) why.push(`${tally(leftOut.notServable)} not a 200 GET with a body (revalidations, errors, redirects, POSTs)`)
  if (leftOut.notAsset.requests > 0) why.push(`${tally(leftOut.notAsset)} not ${counted.rule.startsWith('static') ? 'a static asset (pages, CGI, other)' : 'counted by --assets'}`)
  return {
    counted: `counted (peers could serve them): ${tally(counted)}; rule: ${counted.rule}`,
    leftOut: `left out (the origin serves them; still in the totals): ${tally(leftOut)}${why.length ? `; of which ${why.join(', ')}` : ''}`
  }
}

/**
 * @param {Record<string, any>} r
 * @returns {string | null} how the input's time order was handled (null: generated, in order)
 */
export function orderText (r) {
  const input = r.input
  if (input.kind !== 'trace') return null
  if (input.sorted) {
    const s = input.sorted
    return `input sorted by time (--sort): ${formatCount(s.moved)} of ${formatCount(s.requests)} requests moved ` +
      `(each had been read after a later-timed request), ${s.onDisk ? `on disk in ${s.runs} runs` : `in memory (--sort-memory ${formatBinaryBytes(s.memoryBytes)})`}`
  }
  return `time order: ${formatCount(r.reorderedRequests)} requests were behind the newest time read before them, by at most ` +
    `--order-tolerance ${input.orderTolerance} s, and were replayed at that time`
}

/**
 * The time zone the hourly series is shown in: the log's own offset when it
 * has one, else UTC. Hours are counted from whole UTC hours, which are whole
 * local hours too unless the offset has minutes.
 * @param {Record<string, any>} input the report's `input`
 * @returns {{ offsetMinutes: number, name: string, why: string }}
 */
export function hourZone (input) {
  if (input.kind === 'synthetic') {
    const minutes = Math.round(60 * (input.params?.utcOffset ?? 0))
    return { offsetMinutes: minutes, name: offsetName(minutes), why: "the generated audience's clock (--utc-offset)" }
  }
  if (typeof input.utcOffsetMinutes === 'number') {
    const why = input.format === 'epa' ? "the log's own time (EDT, which the EPA trace implies)" : "the log's own UTC offset, the same on every line"
    return { offsetMinutes: input.utcOffsetMinutes, name: offsetName(input.utcOffsetMinutes), why }
  }
  const why = input.format === 'csv' ? 'ts_unix carries no time zone' : "the log's lines carry different UTC offsets"
  return { offsetMinutes: 0, name: 'UTC', why }
}

/**
 * @param {number} minutes
 * @returns {string} e.g. "UTC-04:00", "UTC+05:30", "UTC"
 */
export function offsetName (minutes) {
  if (minutes === 0) return 'UTC'
  const a = Math.abs(minutes)
  return `UTC${minutes < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`
}
