/**
 * The live dashboard: polls this origin's `/origin-stats` and the coordinator's
 * `GET /stats` once a second and draws what the origin still serves (bytes and
 * requests per second, top paths) beside the coordinator's figures. One self-
 * contained HTML page: inline CSS, inline script, SVG charts, no external files.
 */

/**
 * @param {{ coordinatorHttpUrl: string }} options
 * @returns {string}
 */
export function renderDashboard ({ coordinatorHttpUrl }) {
  // JSON inside <script> must not contain "</script>": escape every "<".
  const config = JSON.stringify({ coordinatorHttpUrl }).replace(/</g, '\\u003c')
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Maygh demo · origin dashboard</title>
<link rel="icon" href="data:,">
<style>
  body { margin: 0; padding: 20px 28px; font: 14px/1.4 system-ui, Arial, sans-serif; background: #12151a; color: #e8e8e8; }
  h1 { margin: 0 0 4px; font-size: 20px; } h2 { margin: 22px 0 10px; font-size: 15px; color: #9aa4b2; font-weight: 600; }
  .sub { color: #8a93a0; font-size: 13px; }
  .tiles { display: flex; flex-wrap: wrap; gap: 12px; margin-bottom: 16px; }
  .tile { min-width: 130px; padding: 12px 16px; border-radius: 10px; background: #1d222a; }
  .tile b { display: block; font-size: 24px; font-variant-numeric: tabular-nums; }
  .tile span { color: #8a93a0; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(380px, 1fr)); gap: 16px; }
  .chart { padding: 12px 16px; border-radius: 10px; background: #1d222a; }
  .chart svg { display: block; width: 100%; height: 140px; }
  table { border-collapse: collapse; width: 100%; max-width: 900px; font-variant-numeric: tabular-nums; }
  td, th { padding: 5px 10px; border-bottom: 1px solid #2a313b; text-align: right; } td:first-child, th:first-child { text-align: left; font-family: ui-monospace, monospace; }
  .bar { height: 8px; border-radius: 4px; background: #f1641e; }
  .down { color: #ff8a7a; } button { padding: 6px 14px; border: 1px solid #3a4350; border-radius: 6px; background: #262c35; color: #e8e8e8; cursor: pointer; }
</style>
</head>
<body>
<h1>Maygh demo · what the origin still serves</h1>
<div class="sub">Polling <code>/origin-stats</code> and <code id="coord-url"></code> every second · <span id="clock"></span> · <button id="reset" type="button">Reset origin counters</button></div>
<h2>Origin</h2>
<div class="tiles" id="origin-tiles"></div>
<div class="charts">
  <div class="chart"><div class="sub">Origin bytes per second (last 2 min)</div><svg id="bytes-chart" viewBox="0 0 600 140" preserveAspectRatio="none"></svg></div>
  <div class="chart"><div class="sub">Origin requests per second (last 2 min)</div><svg id="requests-chart" viewBox="0 0 600 140" preserveAspectRatio="none"></svg></div>
</div>
<h2>Coordinator</h2>
<div class="tiles" id="coord-tiles"></div>
<h2>Top paths by origin bytes</h2>
<table><thead><tr><th>path</th><th>requests</th><th>bytes</th><th style="width:30%"></th></tr></thead><tbody id="paths"></tbody></table>
<script type="application/json" id="config">${config}</script>
<script>
'use strict'
const config = JSON.parse(document.getElementById('config').textContent)
const statsUrl = config.coordinatorHttpUrl.replace(/\\/$/, '') + '/stats'
document.getElementById('coord-url').textContent = statsUrl
const WINDOW = 120
/** @type {{ bytes: number, requests: number }[]} */
const rates = []
let last = null

function fmtBytes (n) {
  if (n < 1024) return n + ' B'
  const units = ['KB', 'MB', 'GB']
  let i = -1
  do { n /= 1024; i++ } while (n >= 1024 && i < units.length - 1)
  return n.toFixed(n < 10 ? 2 : 1) + ' ' + units[i]
}
function label (key) { return key.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[._]/g, ' ') }
function tiles (el, entries) {
  el.replaceChildren(...entries.map(([name, value, cls]) => {
    const div = document.createElement('div')
    div.className = 'tile ' + (cls || '')
    const b = document.createElement('b'); b.textContent = value
    const span = document.createElement('span'); span.textContent = name
    div.append(b, span)
    return div
  }))
}
function chart (svg, values, color, fmt) {
  const max = Math.max(1, ...values)
  const w = 600 / WINDOW
  const bars = values.map((v, i) => '<rect x="' + ((WINDOW - values.length + i) * w).toFixed(1) + '" y="' + (140 - v / max * 120).toFixed(1) +
    '" width="' + Math.max(1, w - 1).toFixed(1) + '" height="' + (v / max * 120).toFixed(1) + '" fill="' + color + '"/>').join('')
  svg.innerHTML = '<line x1="0" x2="600" y1="20" y2="20" stroke="#2f3640" stroke-dasharray="4 4"/>' + bars +
    '<text x="4" y="14" fill="#8a93a0" font-size="12">max ' + fmt(max) + '/s</text>'
}
function flatten (obj, prefix, out) {
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v === 'number' && Number.isFinite(v)) out.push([prefix + k, v])
    else if (v && typeof v === 'object' && !Array.isArray(v) && !prefix) flatten(v, k + '.', out)
  }
  return out
}
function renderOrigin (s) {
  const now = { bytes: s.bytes, requests: s.requests }
  // A counter that went down was reset: count from zero.
  const base = last && now.bytes >= last.bytes && now.requests >= last.requests ? last : { bytes: 0, requests: 0 }
  if (last) rates.push({ bytes: now.bytes - base.bytes, requests: now.requests - base.requests })
  if (rates.length > WINDOW) rates.shift()
  last = now
  const recent = rates.slice(-10)
  const perSec = recent.reduce((a, r) => a + r.bytes, 0) / Math.max(1, recent.length)
  tiles(document.getElementById('origin-tiles'), [
    ['requests', s.requests.toLocaleString()], ['bytes served', fmtBytes(s.bytes)],
    ['bytes/s (10 s avg)', fmtBytes(Math.round(perSec))], ['paths', Object.keys(s.byPath).length]
  ])
  chart(document.getElementById('bytes-chart'), rates.map((r) => r.bytes), '#f1641e', fmtBytes)
  chart(document.getElementById('requests-chart'), rates.map((r) => r.requests), '#4aa3df', String)
  const rows = Object.entries(s.byPath).sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 15)
  const top = Math.max(1, ...rows.map(([, c]) => c.bytes))
  document.getElementById('paths').replaceChildren(...rows.map(([path, c]) => {
    const tr = document.createElement('tr')
    for (const text of [path, c.requests.toLocaleString(), fmtBytes(c.bytes)]) {
      const td = document.createElement('td'); td.textContent = text; tr.append(td)
    }
    const td = document.createElement('td')
    const bar = document.createElement('div'); bar.className = 'bar'; bar.style.width = (c.bytes / top * 100) + '%'
    td.append(bar); tr.append(td)
    return tr
  }))
}
function renderCoordinator (c) {
  const entries = flatten(c, '', []).map(([k, v]) => [label(k), v.toLocaleString()])
  if (typeof c.lookups === 'number' && typeof c.lookupHits === 'number' && c.lookups > 0) {
    entries.push(['lookup hit rate', (c.lookupHits / c.lookups * 100).toFixed(1) + ' %'])
  }
  tiles(document.getElementById('coord-tiles'), entries.length ? entries : [['no numeric fields', '–']])
}
async function poll () {
  document.getElementById('clock').textContent = new Date().toLocaleTimeString()
  try {
    const res = await fetch('/origin-stats', { cache: 'no-store' })
    renderOrigin(await res.json())
  } catch (err) {
    tiles(document.getElementById('origin-tiles'), [['origin', 'unreachable', 'down']])
  }
  try {
    const res = await fetch(statsUrl, { cache: 'no-store', signal: AbortSignal.timeout(900) })
    if (!res.ok) throw new Error('HTTP ' + res.status)
    renderCoordinator(await res.json())
  } catch (err) {
    tiles(document.getElementById('coord-tiles'), [['coordinator unreachable', '—', 'down']])
  }
}
document.getElementById('reset').addEventListener('click', async () => {
  await fetch('/origin-stats/reset', { method: 'POST' })
  last = null
  rates.length = 0
  poll()
})
poll()
setInterval(poll, 1000)
</script>
</body>
</html>
`
}
