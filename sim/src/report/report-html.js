/**
 * The human report: one self-contained HTML file (tables plus Chart.js
 * charts) that opens offline. Chart.js's minified UMD build is read from
 * node_modules at report time and inlined; the run's numbers are embedded as
 * JSON (with `<` escaped, so no trace text can close the script element).
 */
import { writeFile } from 'node:fs/promises'
import { loadChartJs } from '../../../common/chart-js.js'
import { GENERATOR_BYTE_PARAMS, SIM_OPTION_SPECS, TEXT_KINDS } from '../config.js'
import { ERRORS, MayghError } from '../../../protocol/index.js'
import { formatBytes, formatCount, formatPercent, formatRate, formatSize } from './format.js'
import { SAMPLING_NOTE, countedText, hourZone, orderText } from './input-facts.js'
import { chartScript } from './report-charts.js'
import { valueLabel } from '../run/sweep.js'

/**
 * @param {unknown} s
 * @returns {string} HTML-escaped text
 */
function esc (s) {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/**
 * @param {string[] | null} header null: none
 * @param {unknown[][]} rows
 * @param {string} [cls] `text`: values are words, aligned left
 * @returns {string}
 */
function table (header, rows, cls = '') {
  return `<table${cls ? ` class="${cls}"` : ''}>${header ? `<thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>` : ''}<tbody>${
    rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('')}</tbody></table>`
}

/**
 * Renders the report.
 * @param {any} report the object `--json` prints
 * @param {string} chartJs Chart.js UMD source
 * @returns {string} HTML
 */
export function renderReport (report, chartJs) {
  const r = report
  const input = r.input
  const title = input.kind === 'trace' ? `${input.file} (${input.format})` : `synthetic ${input.generator} trace, seed ${input.params.seed}`
  const share = (/** @type {number} */ x) => formatPercent(r.bytes > 0 ? x / r.bytes : 0)
  const summary = table(['', 'requests', 'bytes', 'share of bytes'], [
    ['total (what the log says the origin served)', formatCount(r.requests), formatBytes(r.bytes), '100.0%'],
    ['origin, with Maygh', formatCount(r.originRequests), formatBytes(r.originBytes), share(r.originBytes)],
    ['served by peers', formatCount(r.peerRequests), formatBytes(r.peerBytes), share(r.peerBytes)],
    ["served from the client's own store", formatCount(r.cacheRequests), formatBytes(r.cacheBytes), share(r.cacheBytes)]
  ])
  const headline = table(['measure', 'value'], [
    ['savings (1 − origin bytes ÷ logged bytes)', formatPercent(r.savings)],
    ['  of which peers', formatPercent(r.peerSavings)],
    ['  of which own store', formatPercent(r.cacheSavings)],
    ['oracle bound (any online holder; no caps, no failures)', formatPercent(r.oracleSavings)],
    [`plug-in baseline (${formatPercent(r.plugin?.adoption ?? 0, 0)} adoption)`, r.plugin ? formatPercent(r.pluginSavings) : 'not run'],
    ['counted: bytes peers could serve (share of logged bytes)', share(r.assetBytes)]
  ])
  const f = r.fairness
  const fairness = table(['measure', 'value'], [
    ['clients taking part', formatCount(f.participants)],
    ['clients that uploaded anything', formatCount(f.uploaders)],
    ['most bytes one client served', formatBytes(f.maxBytes)],
    ['p99 of bytes served (all participants)', formatBytes(f.p99Bytes)],
    ['p99 of bytes served (uploaders only)', formatBytes(f.p99UploaderBytes)],
    ['mean bytes served', formatBytes(f.meanBytes)],
    ['Gini coefficient of upload', f.gini.toFixed(3)]
  ])
  const co = r.coordinator
  const coordinator = table(['message', 'total', 'mean per second', 'peak per second'], [
    ['lookup', formatCount(co.lookups), formatRate(co.lookupsPerSecond.mean), formatCount(co.lookupsPerSecond.peak)],
    ['update', formatCount(co.updates), formatRate(co.updatesPerSecond.mean), formatCount(co.updatesPerSecond.peak)],
    ['join', formatCount(co.joins), formatRate(co.joinsPerSecond.mean), formatCount(co.joinsPerSecond.peak)]
  ])
  const cn = r.connections
  const connections = table(['measure', 'value'], [
    ['new connections tried', formatCount(cn.attempts)],
    ['of which failed', formatCount(cn.failures)],
    ['fetches over an open channel', formatCount(cn.reused)],
    ['lookups that returned holders', formatCount(co.lookupHits)],
    ['fetches that waited for a set-up an earlier load of the page started', formatCount(cn.setupsShared)],
    ['store evictions', formatCount(r.store.evictions)],
    ['objects larger than the quota', formatCount(r.store.tooBig)],
    ['page views (each a join with page-lifetime channels)', formatCount(r.pageViews)],
    ['first page views: requests and bytes from the origin', `${formatCount(r.firstPage.requests)}, ${formatBytes(r.firstPage.bytes)}`],
    ['audio and video: requests and bytes from the origin', `${formatCount(r.media.requests)}, ${formatBytes(r.media.bytes)}`],
    ['races lost to the origin', formatCount(r.hedge.racesLost)],
    ['no_channel reports sent / counted toward quarantine', `${formatCount(r.reports.sent)} / ${formatCount(r.reports.counted)}`],
    ['quarantines (clients)', `${formatCount(r.reports.quarantines)} (${formatCount(r.reports.quarantinedClients)})`],
    ['upload budget spent: in a session / in a day', `${formatCount(r.uploadBudget.sessionStops)} / ${formatCount(r.uploadBudget.dayStops)}`]
  ])
  const zone = hourZone(input)
  const counted = countedText(r)
  const order = orderText(r)
  const bad = input.badExamples?.length
    ? `<h2>Bad lines</h2><p>${formatCount(input.badLines)} lines could not be parsed; the first:</p>${table(['line', 'text'], input.badExamples.map((/** @type {any} */ b) => [b.line, b.text]))}`
    : ''
  const sweeps = (r.sweeps ?? []).map((/** @type {any} */ s, /** @type {number} */ i) => `<h3>${esc(s.param)}</h3>
<div class="chart"><canvas id="sweep${i}"></canvas></div>
${table([s.param, 'savings', 'peers', 'own store', 'oracle', 'peak lookups/s', 'max upload'], s.rows.map((/** @type {any} */ row) => [
    row.label, formatPercent(row.savings), formatPercent(row.peerSavings), formatPercent(row.cacheSavings), formatPercent(row.oracleSavings), formatCount(row.peakLookupsPerSecond), formatBytes(row.maxUploadBytes)]))}`).join('\n')
  const data = JSON.stringify({
    hourly: r.hourly,
    lorenz: f.lorenz,
    sweeps: r.sweeps ?? [],
    zone
  }).replace(/</g, '\\u003c')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>maygh-sim: ${esc(title)}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;padding:.25rem .6rem;text-align:right}
td:first-child,th:first-child{text-align:left}th{background:#f3f3f3}.chart{position:relative;height:320px;margin:1rem 0 2rem}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:1.5rem}h1{font-size:1.5rem}.big{font-size:1.3rem}
table.text td{text-align:left}.note{background:#fff8e1;border-left:4px solid #f0b400;padding:.6rem .9rem;margin:1rem 0}ul.facts{padding-left:1.2rem}
</style></head><body>
<h1>Maygh replay: ${esc(title)}</h1>
<p class="big">Visitors' browsers would have served <b>${formatPercent(r.savings)}</b> of the bytes the origin served
(peers ${formatPercent(r.peerSavings)}, own store ${formatPercent(r.cacheSavings)}); oracle bound ${formatPercent(r.oracleSavings)}${r.plugin ? `; a plug-in at ${formatPercent(r.plugin.adoption, 0)} adoption: ${formatPercent(r.pluginSavings)}` : ''}.</p>
${headline}
${summary}
<h2>What was counted</h2>
<ul class="facts"><li>${esc(counted.counted)}</li><li>${esc(counted.leftOut)}</li>${order ? `<li>${esc(order)}</li>` : ''}</ul>
${input.kind === 'trace' ? `<p class="note"><b>Sampled logs.</b> ${esc(SAMPLING_NOTE)}</p>` : ''}
<h2>Over time</h2>
<p>Hours are shown in ${esc(zone.name)}: ${esc(zone.why)}.</p>
<div class="chart"><canvas id="bytes"></canvas></div>
<div class="chart"><canvas id="savings"></canvas></div>
<div class="chart"><canvas id="load"></canvas></div>
<h2>Fairness of upload</h2>
<div class="grid"><div>${fairness}</div><div class="chart"><canvas id="lorenz"></canvas></div></div>
<h2>Coordinator load</h2>
${coordinator}
<h2>Connections and stores</h2>
${connections}
${sweeps ? `<h2>Sensitivity</h2>${sweeps}` : ''}
<h2>Input</h2>
${table(null, inputRows(r, zone), 'text')}
${bad}
<h2>Model configuration</h2>
${table(['option', 'value'], configRows(r.config))}
<p>Generated by maygh-sim in ${r.elapsedSeconds.toFixed(1)} s (${formatCount(r.requestsPerSecond)} requests/s).</p>
<script>${chartJs.replace(/<\/script/gi, '<\\/script')}</script>
<script type="application/json" id="data">${data}</script>
<script>${chartScript()}</script>
</body></html>
`
}

const FORMATS = /** @type {Record<string, string>} */ ({ clf: 'Common / Combined Log Format', epa: 'EPA-HTTP (a CLF variant)', csv: 'CSV' })

/**
 * The Input table: what was read or generated, with labels for people.
 * @param {Record<string, any>} r the report
 * @param {{ name: string, why: string }} zone
 * @returns {string[][]}
 */
function inputRows (r, zone) {
  const input = r.input
  const hours = ['hours shown in', `${zone.name} (${zone.why})`]
  if (input.kind !== 'trace') {
    const rows = [
      ['generator', 'Etsy-like trace (--synthetic etsy), in time order by construction'],
      ['requests generated', formatCount(input.requests)],
      ['clients', formatCount(input.clients)],
      ['objects requested', formatCount(input.objects)],
      hours
    ]
    for (const [k, v] of Object.entries(input.params ?? {})) {
      const flag = `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
      const shown = k === 'start'
        ? new Date(v * 1000).toISOString().replace('T', ' ').replace('.000Z', ' UTC')
        : GENERATOR_BYTE_PARAMS.includes(k) ? formatSize(v) : Number.isInteger(v) && v >= 10_000 ? formatCount(v) : String(v)
      rows.push([flag, shown])
    }
    return rows
  }
  const compression = input.compression === 'zip' ? `zip (${input.zipEntry} inside)` : input.compression
  return [
    ['file', input.file],
    ['format', FORMATS[input.format] ?? input.format],
    ['compression', compression],
    ['lines read', formatCount(input.lines)],
    ['requests parsed', formatCount(input.parsedRequests)],
    ['lines that could not be parsed', formatCount(input.badLines)],
    ['clients (distinct hosts)', formatCount(input.clients)],
    ['objects (distinct URLs)', formatCount(input.objects)],
    ['what peers may serve', input.assetRule],
    ['time order', input.sorted
      ? `sorted by --sort: ${formatCount(input.sorted.moved)} requests moved`
      : `${formatCount(r.reorderedRequests)} requests up to ${input.orderTolerance} s out of order (--order-tolerance), replayed at the newest time before them`],
    hours
  ]
}

/**
 * The model's configuration as the flags read it (`50 MiB`, not 52428800).
 * @param {Record<string, any>} config
 * @returns {string[][]}
 */
function configRows (config) {
  return Object.entries(SIM_OPTION_SPECS).map(([key, spec]) => {
    const v = config[key]
    return [`--${spec.flag}`, TEXT_KINDS.includes(spec.kind) ? String(v) : valueLabel(spec, v === 'Infinity' ? Infinity : v)]
  })
}

/**
 * Writes the report to `path`.
 * @param {string} path
 * @param {any} report
 */
export async function writeReport (path, report) {
  const html = renderReport(report, await loadChartJs().catch((err) => { throw new MayghError(ERRORS.MGH_SIM_ERR_REPORT, err.message) }))
  try {
    await writeFile(path, html)
  } catch (err) {
    throw new MayghError(ERRORS.MGH_SIM_ERR_REPORT, `${path}: ${/** @type {Error} */ (err).message}`)
  }
}
