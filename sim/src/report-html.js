/**
 * The human report: one self-contained HTML file (tables plus Chart.js
 * charts) that opens offline. Chart.js's minified UMD build is read from
 * node_modules at report time and inlined; the run's numbers are embedded as
 * JSON (with `<` escaped, so no trace text can close the script element).
 */
import { readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { SimError } from './errors.js'
import { formatBytes, formatCount, formatPercent, formatRate } from './format.js'

/**
 * The Chart.js UMD build's source.
 * @returns {Promise<string>}
 */
export async function loadChartJs () {
  let dir
  try {
    dir = dirname(createRequire(import.meta.url).resolve('chart.js'))
  } catch {
    throw new SimError('MGH_SIM_ERR_REPORT', 'the chart.js package is not installed (npm install)')
  }
  for (const name of ['chart.umd.min.js', 'chart.umd.js']) {
    try {
      return await readFile(join(dir, name), 'utf8')
    } catch {}
  }
  throw new SimError('MGH_SIM_ERR_REPORT', `no UMD build of chart.js in ${dir}`)
}

/**
 * @param {unknown} s
 * @returns {string} HTML-escaped text
 */
function esc (s) {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/**
 * @param {string[]} header
 * @param {unknown[][]} rows
 * @returns {string}
 */
function table (header, rows) {
  return `<table><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${
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
    ['assets Maygh may serve (share of logged bytes)', share(r.assetBytes)]
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
    ['store evictions', formatCount(r.store.evictions)],
    ['objects larger than the quota', formatCount(r.store.tooBig)]
  ])
  const configRows = Object.entries(r.config).map(([k, v]) => [k, String(v)])
  const inputRows = Object.entries(input).filter(([k]) => k !== 'badExamples' && k !== 'params').map(([k, v]) => [k, typeof v === 'number' ? formatCount(v) : String(v)])
  if (input.params) for (const [k, v] of Object.entries(input.params)) inputRows.push([`generator ${k}`, String(v)])
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
    sweeps: r.sweeps ?? []
  }).replace(/</g, '\\u003c')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>maygh-sim: ${esc(title)}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;padding:.25rem .6rem;text-align:right}
td:first-child,th:first-child{text-align:left}th{background:#f3f3f3}.chart{position:relative;height:320px;margin:1rem 0 2rem}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:1.5rem}h1{font-size:1.5rem}.big{font-size:1.3rem}
</style></head><body>
<h1>Maygh replay: ${esc(title)}</h1>
<p class="big">Visitors' browsers would have served <b>${formatPercent(r.savings)}</b> of the bytes the origin served
(peers ${formatPercent(r.peerSavings)}, own store ${formatPercent(r.cacheSavings)}); oracle bound ${formatPercent(r.oracleSavings)}${r.plugin ? `; a plug-in at ${formatPercent(r.plugin.adoption, 0)} adoption: ${formatPercent(r.pluginSavings)}` : ''}.</p>
${headline}
${summary}
<h2>Over time</h2>
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
${table(['', ''], inputRows)}
${bad}
<h2>Model configuration</h2>
${table(['option', 'value'], configRows)}
<p>Generated by maygh-sim in ${r.elapsedSeconds.toFixed(1)} s (${formatCount(r.requestsPerSecond)} requests/s).</p>
<script>${chartJs.replace(/<\/script/gi, '<\\/script')}</script>
<script type="application/json" id="data">${data}</script>
<script>
const D = JSON.parse(document.getElementById('data').textContent)
const H = D.hourly
const labels = Array.from({ length: H.hours }, (_, i) => new Date((H.start + i * 3600) * 1000).toISOString().slice(0, 13).replace('T', ' ') + 'h')
const GB = (a) => a.map((x) => x / 1e9)
const pct = (a, b) => a.map((x, i) => (b[i] > 0 ? (100 * x) / b[i] : null))
const common = { responsive: true, maintainAspectRatio: false, animation: false, interaction: { mode: 'index', intersect: false } }
new Chart(document.getElementById('bytes'), { type: 'line', data: { labels, datasets: [
  { label: 'origin (GB)', data: GB(H.originBytes), fill: true, borderColor: '#c0392b', backgroundColor: 'rgba(192,57,43,.35)', pointRadius: 0 },
  { label: 'peers (GB)', data: GB(H.peerBytes), fill: true, borderColor: '#2471a3', backgroundColor: 'rgba(36,113,163,.35)', pointRadius: 0 },
  { label: 'own store (GB)', data: GB(H.cacheBytes), fill: true, borderColor: '#229954', backgroundColor: 'rgba(34,153,84,.35)', pointRadius: 0 }] },
  options: { ...common, plugins: { title: { display: true, text: 'Bytes per hour by source (stacked)' } }, scales: { y: { stacked: true, title: { display: true, text: 'GB' } } } } })
new Chart(document.getElementById('savings'), { type: 'line', data: { labels, datasets: [
  { label: 'savings %', data: pct(H.bytes.map((b, i) => b - H.originBytes[i]), H.bytes), borderColor: '#2471a3', pointRadius: 0 },
  { label: 'oracle bound %', data: pct(H.oracleBytes, H.bytes), borderColor: '#7d3c98', borderDash: [4, 3], pointRadius: 0 }] },
  options: { ...common, plugins: { title: { display: true, text: 'Savings per hour' } }, scales: { y: { min: 0, max: 100, title: { display: true, text: '%' } } } } })
new Chart(document.getElementById('load'), { type: 'line', data: { labels, datasets: [
  { label: 'online clients (peak in hour)', data: H.onlinePeak, borderColor: '#229954', pointRadius: 0, yAxisID: 'y' },
  { label: 'lookups per second (hour mean)', data: H.lookups.map((x) => x / 3600), borderColor: '#ca6f1e', pointRadius: 0, yAxisID: 'y1' },
  { label: 'updates per second (hour mean)', data: H.updates.map((x) => x / 3600), borderColor: '#7f8c8d', pointRadius: 0, yAxisID: 'y1' }] },
  options: { ...common, plugins: { title: { display: true, text: 'Online clients and coordinator load' } },
    scales: { y: { title: { display: true, text: 'clients' } }, y1: { position: 'right', grid: { drawOnChartArea: false }, title: { display: true, text: 'messages/s' } } } } })
new Chart(document.getElementById('lorenz'), { type: 'line', data: { datasets: [
  { label: 'upload (Lorenz curve)', data: D.lorenz.map(([x, y]) => ({ x: 100 * x, y: 100 * y })), borderColor: '#2471a3', pointRadius: 0 },
  { label: 'perfect equality', data: [{ x: 0, y: 0 }, { x: 100, y: 100 }], borderColor: '#aaa', borderDash: [4, 3], pointRadius: 0 }] },
  options: { ...common, interaction: { mode: 'nearest', intersect: false }, plugins: { title: { display: true, text: 'Share of upload bytes by share of clients' } },
    scales: { x: { type: 'linear', min: 0, max: 100, title: { display: true, text: '% of clients (least uploading first)' } }, y: { min: 0, max: 100, title: { display: true, text: '% of bytes served' } } } } })
D.sweeps.forEach((s, i) => new Chart(document.getElementById('sweep' + i), { type: 'line', data: { labels: s.rows.map((r) => r.label), datasets: [
  { label: 'savings %', data: s.rows.map((r) => 100 * r.savings), borderColor: '#2471a3' },
  { label: 'peers %', data: s.rows.map((r) => 100 * r.peerSavings), borderColor: '#ca6f1e' },
  { label: 'oracle %', data: s.rows.map((r) => 100 * r.oracleSavings), borderColor: '#7d3c98', borderDash: [4, 3] }] },
  options: { ...common, plugins: { title: { display: true, text: 'Savings by ' + s.param } }, scales: { x: { title: { display: true, text: s.param } }, y: { min: 0, max: 100, title: { display: true, text: '%' } } } } }))
</script>
</body></html>
`
}

/**
 * Writes the report to `path`.
 * @param {string} path
 * @param {any} report
 */
export async function writeReport (path, report) {
  const html = renderReport(report, await loadChartJs())
  try {
    await writeFile(path, html)
  } catch (err) {
    throw new SimError('MGH_SIM_ERR_REPORT', `${path}: ${/** @type {Error} */ (err).message}`)
  }
}
