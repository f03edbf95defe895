/**
 * The live dashboard: polls this origin's `/origin-stats` and
 * `/origin-stats/history` and the coordinator's `GET /stats` once a second, and
 * charts what the origin still serves, second by second (bytes, split into
 * manifest assets and the rest, and requests) over the history the origin
 * keeps, so that a dashboard opened after the traffic shows it; beside that,
 * the totals, top paths and the coordinator's figures. Chart.js, as the
 * coordinator's dashboard has it, served beside the page at
 * `/dashboard/chart.js`; relative URLs only, nothing from elsewhere.
 */

/**
 * @param {{ coordinatorHttpUrl: string, historySeconds: number }} options
 *   `historySeconds`: how far back `/origin-stats/history` goes (the charts' widest window)
 * @returns {string}
 */
export function renderDashboard ({ coordinatorHttpUrl, historySeconds }) {
  // JSON inside <script> must not contain "</script>": escape every "<".
  const config = JSON.stringify({ coordinatorHttpUrl }).replace(/</g, '\\u003c')
  // The whole history, and the last two minutes (the old dashboard's window) for a closer look.
  const windows = [historySeconds, ...(historySeconds > 120 ? [120] : [])]
  const options = windows.map((s) => `<option value="${s}">${s % 60 === 0 ? s / 60 + ' min' : s + ' s'}</option>`).join('')
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
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 16px; }
  .chart { position: relative; height: 260px; padding: 12px 16px; border-radius: 10px; background: #1d222a; }
  table { border-collapse: collapse; width: 100%; max-width: 900px; font-variant-numeric: tabular-nums; }
  td, th { padding: 5px 10px; border-bottom: 1px solid #2a313b; text-align: right; } td:first-child, th:first-child { text-align: left; font-family: ui-monospace, monospace; }
  .bar { height: 8px; border-radius: 4px; background: #f1641e; }
  .down { color: #ff8a7a; } button, select { padding: 6px 14px; border: 1px solid #3a4350; border-radius: 6px; background: #262c35; color: #e8e8e8; cursor: pointer; }
</style>
</head>
<body>
<h1>Maygh demo · what the origin still serves</h1>
<div class="sub">Polling <code>/origin-stats</code>, <code>/origin-stats/history</code> and <code id="coord-url"></code> every second · <span id="clock"></span> · <button id="reset" type="button">Reset origin counters</button></div>
<h2>Origin</h2>
<div class="tiles" id="origin-tiles"></div>
<div class="sub">Charts: the last <select id="window">${options}</select>, one sample a second, as the origin counted them (it keeps ${historySeconds} s) <span id="chart-error" class="down"></span></div>
<div class="charts">
  <div class="chart"><canvas id="bytes-chart"></canvas></div>
  <div class="chart"><canvas id="requests-chart"></canvas></div>
</div>
<h2>Coordinator</h2>
<div class="tiles" id="coord-tiles"></div>
<h2>Top paths by origin bytes</h2>
<table><thead><tr><th>path</th><th>requests</th><th>bytes</th><th style="width:30%"></th></tr></thead><tbody id="paths"></tbody></table>
<script type="application/json" id="config">${config}</script>
<script src="/dashboard/chart.js"></script>
<script>
'use strict'
const $ = (id) => document.getElementById(id)
const config = JSON.parse($('config').textContent)
const statsUrl = config.coordinatorHttpUrl.replace(/\\/$/, '') + '/stats'
$('coord-url').textContent = statsUrl
const UNITS = ['B', 'KB', 'MB', 'GB', 'TB']
const GRID = '#2a313b'
const TEXT = '#8a93a0'

/** 1000-based, three significant digits at most: "0 B", "250 KB", "1.25 MB" (as on the coordinator's dashboard) */
function fmtBytes (n) {
  let i = 0
  while (n >= 1000 && i < UNITS.length - 1) { n /= 1000; i++ }
  return Number(n.toPrecision(3)) + ' ' + UNITS[i]
}
/** a number of seconds as "10 min" or "90 s" */
function span (seconds) { return seconds % 60 === 0 ? seconds / 60 + ' min' : seconds + ' s' }
/** an x value (seconds before the latest sample, 0 or less) as a label: whole minutes in the wide window */
function ago (v) {
  if (v === 0) return 'now'
  return -v % 60 === 0 && Number($('window').value) > 300 ? -v / 60 + ' min ago' : -v + ' s ago'
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
function flatten (obj, prefix, out) {
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v === 'number' && Number.isFinite(v)) out.push([prefix + k, v])
    else if (v && typeof v === 'object' && !Array.isArray(v) && !prefix) flatten(v, k + '.', out)
  }
  return out
}

/**
 * One chart over time: x in seconds before the latest sample, y from 0 with
 * a floor on its top so that a quiet origin draws a flat line on a sensible
 * scale, not "1 B/s" ticks.
 */
function timeChart (canvas, { datasets, yTitle, suggestedMax, tick, stacked }) {
  return new Chart(canvas, {
    type: 'line',
    data: { datasets: datasets.map((d) => ({ data: [], pointRadius: 0, borderWidth: 1.5, stepped: 'before', ...d })) },
    options: {
      animation: false,
      maintainAspectRatio: false,
      interaction: { mode: 'index', intersect: false },
      plugins: {
        legend: { labels: { color: '#e8e8e8', boxWidth: 14 } },
        tooltip: { callbacks: { title: (items) => items.length ? ago(items[0].parsed.x) : '', label: (item) => item.dataset.label + ': ' + tick(item.parsed.y) } }
      },
      scales: {
        x: {
          type: 'linear', max: 0, // min and ticks.stepSize: showWindow()
          title: { display: true, text: 'time (one sample a second; 0 = now)', color: TEXT },
          ticks: { color: TEXT, callback: ago }, grid: { color: GRID }
        },
        y: {
          stacked: Boolean(stacked), beginAtZero: true, suggestedMax,
          title: { display: true, text: yTitle, color: TEXT },
          ticks: { color: TEXT, precision: 0, callback: tick }, grid: { color: GRID }
        }
      }
    }
  })
}
/** Show the chosen window: from its start to now, a tick a minute (every 20 s in 2 minutes). */
function showWindow (chart) {
  const seconds = Number($('window').value)
  chart.options.scales.x.min = -seconds
  chart.options.scales.x.ticks.stepSize = seconds > 300 ? 60 * Math.ceil(seconds / 600) : 20
  chart.update()
}

let charts = null
if (typeof Chart === 'function') {
  charts = {
    bytes: timeChart($('bytes-chart'), {
      yTitle: 'origin bytes per second',
      suggestedMax: 100000,
      tick: (v) => fmtBytes(v) + '/s',
      stacked: true,
      datasets: [
        { label: 'manifest assets (what visitors can serve each other)', borderColor: '#f1641e', backgroundColor: 'rgba(241, 100, 30, .35)', fill: 'origin' },
        { label: 'pages, client, manifest, errors', borderColor: '#9aa4b2', backgroundColor: 'rgba(154, 164, 178, .25)', fill: '-1' }
      ]
    }),
    requests: timeChart($('requests-chart'), {
      yTitle: 'origin requests per second',
      suggestedMax: 10,
      tick: (v) => v + '/s',
      datasets: [{ label: 'requests', borderColor: '#4aa3df', backgroundColor: 'rgba(74, 163, 223, .3)', fill: 'origin' }]
    })
  }
  for (const chart of Object.values(charts)) showWindow(chart)
} else {
  $('chart-error').textContent = '· no charts: /dashboard/chart.js did not load'
}

function plot (h) {
  if (!charts) return
  const n = h.bytes.length
  const points = (values) => values.map((y, i) => ({ x: i - (n - 1), y }))
  charts.bytes.data.datasets[0].data = points(h.assetBytes)
  charts.bytes.data.datasets[1].data = points(h.bytes.map((b, i) => b - h.assetBytes[i]))
  charts.requests.data.datasets[0].data = points(h.requests)
  for (const chart of Object.values(charts)) showWindow(chart)
}
function renderOrigin (s, h) {
  // The last ten whole seconds (the one in progress left out).
  const recent = h.bytes.slice(-11, -1)
  const perSec = recent.reduce((a, b) => a + b, 0) / Math.max(1, recent.length)
  const windowBytes = h.bytes.reduce((a, b) => a + b, 0)
  tiles($('origin-tiles'), [
    ['requests', s.requests.toLocaleString()], ['bytes served', fmtBytes(s.bytes)],
    ['bytes/s (10 s avg)', fmtBytes(Math.round(perSec))],
    ['bytes, last ' + span(h.bytes.length), fmtBytes(windowBytes)],
    ['paths', Object.keys(s.byPath).length]
  ])
  plot(h)
  const rows = Object.entries(s.byPath).sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 15)
  const top = Math.max(1, ...rows.map(([, c]) => c.bytes))
  $('paths').replaceChildren(...rows.map(([path, c]) => {
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
  tiles($('coord-tiles'), entries.length ? entries : [['no numeric fields', '–']])
}
async function getJson (url) {
  const res = await fetch(url, { cache: 'no-store' })
  if (!res.ok) throw new Error('HTTP ' + res.status)
  return res.json()
}
async function poll () {
  $('clock').textContent = new Date().toLocaleTimeString()
  try {
    const [s, h] = await Promise.all([getJson('/origin-stats'), getJson('/origin-stats/history')])
    renderOrigin(s, h)
  } catch (err) {
    tiles($('origin-tiles'), [['origin', 'unreachable', 'down']])
  }
  try {
    const res = await fetch(statsUrl, { cache: 'no-store', signal: AbortSignal.timeout(900) })
    if (!res.ok) throw new Error('HTTP ' + res.status)
    renderCoordinator(await res.json())
  } catch (err) {
    tiles($('coord-tiles'), [['coordinator unreachable', '—', 'down']])
  }
}
$('reset').addEventListener('click', async () => {
  await fetch('/origin-stats/reset', { method: 'POST' })
  poll()
})
$('window').addEventListener('change', () => { for (const chart of Object.values(charts ?? {})) showWindow(chart) })
poll()
setInterval(poll, 1000)
</script>
</body>
</html>
`
}
