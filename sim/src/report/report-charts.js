/**
 * The HTML report's charts: the browser-side script that draws them with
 * Chart.js from the run's numbers (embedded as JSON in the page). Kept apart
 * from report-html.js, which writes the tables around them. Every chart of
 * amounts starts its axis at zero, so the eye reads heights as amounts.
 */

/**
 * The script, to be inlined after Chart.js and a `<script id="data">` holding
 * `{ hourly, lorenz, sweeps, zone: { offsetMinutes, name } }`.
 * @returns {string}
 */
export function chartScript () {
  return `
const D = JSON.parse(document.getElementById('data').textContent)
const H = D.hourly
// hours are whole UTC hours; their labels are shown in the zone the report names
const hourLabel = (i) => new Date((H.start + i * 3600 + D.zone.offsetMinutes * 60) * 1000).toISOString().slice(0, 16).replace('T', ' ')
const labels = Array.from({ length: H.hours }, (_, i) => hourLabel(i))
const xHours = { title: { display: true, text: 'hour starting (' + D.zone.name + ')' } }
// bytes per hour in the unit that suits the run: GB for a busy site, MB for a small log
const peakBytes = Math.max(0, ...H.bytes)
const unit = peakBytes >= 1e9 ? ['GB', 1e9] : peakBytes >= 1e6 ? ['MB', 1e6] : ['kB', 1e3]
const inUnit = (a) => a.map((x) => x / unit[1])
const pct = (a, b) => a.map((x, i) => (b[i] > 0 ? (100 * x) / b[i] : null))
const common = { responsive: true, maintainAspectRatio: false, animation: false, interaction: { mode: 'index', intersect: false } }
new Chart(document.getElementById('bytes'), { type: 'line', data: { labels, datasets: [
  { label: 'origin', data: inUnit(H.originBytes), fill: 'origin', borderColor: '#c0392b', backgroundColor: 'rgba(192,57,43,.35)', pointRadius: 0 },
  { label: 'peers', data: inUnit(H.peerBytes), fill: '-1', borderColor: '#2471a3', backgroundColor: 'rgba(36,113,163,.35)', pointRadius: 0 },
  { label: 'own store', data: inUnit(H.cacheBytes), fill: '-1', borderColor: '#229954', backgroundColor: 'rgba(34,153,84,.35)', pointRadius: 0 }] },
  options: { ...common, plugins: { title: { display: true, text: 'Bytes per hour by source (stacked; the top line is what the log says the origin sent)' } },
    scales: { x: xHours, y: { stacked: true, beginAtZero: true, min: 0, title: { display: true, text: unit[0] + ' per hour' } } } } })
new Chart(document.getElementById('savings'), { type: 'line', data: { labels, datasets: [
  { label: 'savings %', data: pct(H.bytes.map((b, i) => b - H.originBytes[i]), H.bytes), borderColor: '#2471a3', pointRadius: 0 },
  { label: 'oracle bound %', data: pct(H.oracleBytes, H.bytes), borderColor: '#7d3c98', borderDash: [4, 3], pointRadius: 0 }] },
  options: { ...common, plugins: { title: { display: true, text: 'Savings per hour' } }, scales: { x: xHours, y: { min: 0, max: 100, title: { display: true, text: '%' } } } } })
new Chart(document.getElementById('load'), { type: 'line', data: { labels, datasets: [
  { label: 'online clients (peak in hour)', data: H.onlinePeak, borderColor: '#229954', pointRadius: 0, yAxisID: 'y' },
  { label: 'lookups per second (hour mean)', data: H.lookups.map((x) => x / 3600), borderColor: '#ca6f1e', pointRadius: 0, yAxisID: 'y1' },
  { label: 'updates per second (hour mean)', data: H.updates.map((x) => x / 3600), borderColor: '#7f8c8d', pointRadius: 0, yAxisID: 'y1' }] },
  options: { ...common, plugins: { title: { display: true, text: 'Online clients and coordinator load' } },
    scales: { x: xHours, y: { beginAtZero: true, min: 0, title: { display: true, text: 'clients' } },
      y1: { position: 'right', beginAtZero: true, min: 0, grid: { drawOnChartArea: false }, title: { display: true, text: 'messages/s' } } } } })
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
`
}
