/**
 * The coordinator's dashboard (`GET /dashboard`), for any site that uses it:
 * polls `/usage` every few seconds and shows, for the chosen site, the share
 * of asset bytes its visitors served each other, the bytes by source, the
 * peers online, a per-minute chart (Chart.js, served at
 * `/dashboard/chart.js`) and the assets that saved the most. Relative URLs
 * only, so it works behind whatever proxy serves the coordinator.
 */

/** @returns {string} */
export function renderDashboard () {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>maygh · savings</title>
<link rel="icon" href="data:,">
<style>
  body { margin: 0; padding: 20px 28px; font: 14px/1.4 system-ui, Arial, sans-serif; background: #12151a; color: #e8e8e8; }
  h1 { margin: 0 0 4px; font-size: 20px; } h2 { margin: 22px 0 10px; font-size: 15px; color: #9aa4b2; font-weight: 600; }
  .sub { color: #8a93a0; font-size: 13px; } select { background: #262c35; color: #e8e8e8; border: 1px solid #3a4350; border-radius: 6px; padding: 4px 8px; }
  .tiles { display: flex; flex-wrap: wrap; gap: 12px; }
  .tile { min-width: 150px; padding: 12px 16px; border-radius: 10px; background: #1d222a; }
  .tile b { display: block; font-size: 24px; font-variant-numeric: tabular-nums; }
  .tile span { color: #8a93a0; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
  .tile.share b { color: #5fd38d; }
  .chart { padding: 12px 16px; border-radius: 10px; background: #1d222a; max-width: 960px; height: 260px; }
  table { border-collapse: collapse; width: 100%; max-width: 960px; font-variant-numeric: tabular-nums; }
  td, th { padding: 5px 10px; border-bottom: 1px solid #2a313b; text-align: right; } td:first-child, th:first-child { text-align: left; font-family: ui-monospace, monospace; }
  .error { color: #ff8a7a; }
</style>
</head>
<body>
<h1>maygh · what visitors served each other</h1>
<div class="sub">Site <select id="site"></select> · last <select id="minutes"><option value="60">hour</option><option value="360">6 hours</option><option value="1440">day</option></select> · updated <span id="updated">never</span> <span id="error" class="error"></span></div>
<h2>Since counting began</h2>
<div class="tiles">
  <div class="tile share"><span>served by visitors</span><b id="share">–</b></div>
  <div class="tile"><span>from peers</span><b id="peer-bytes">–</b></div>
  <div class="tile"><span>from the origin</span><b id="origin-bytes">–</b></div>
  <div class="tile"><span>from visitors' stores</span><b id="cache-bytes">–</b></div>
  <div class="tile"><span>peers online</span><b id="peers-online">–</b></div>
</div>
<h2>Asset bytes per minute</h2>
<div class="chart"><canvas id="chart"></canvas></div>
<h2>Assets that saved the most</h2>
<table id="top-assets"><thead><tr><th>asset</th><th>bytes from peers</th></tr></thead><tbody></tbody></table>
<script src="/dashboard/chart.js"></script>
<script>
'use strict'
const $ = (id) => document.getElementById(id)
const UNITS = ['B', 'KB', 'MB', 'GB', 'TB']
function bytes (n) {
  let i = 0
  while (n >= 1000 && i < UNITS.length - 1) { n /= 1000; i++ }
  return (i === 0 ? String(n) : n.toFixed(n < 10 ? 2 : 1)) + ' ' + UNITS[i]
}
const share = (c) => c.peer + c.origin > 0 ? c.peer / (c.peer + c.origin) : 0
const chart = new Chart($('chart'), {
  type: 'bar',
  data: { labels: [], datasets: [
    { label: 'from peers', data: [], backgroundColor: '#5fd38d', stack: 'b', yAxisID: 'y' },
    { label: 'from the origin', data: [], backgroundColor: '#f1641e', stack: 'b', yAxisID: 'y' },
    { label: 'share served by visitors', data: [], type: 'line', borderColor: '#4aa3df', yAxisID: 'share', pointRadius: 0 }
  ] },
  options: {
    animation: false, maintainAspectRatio: false,
    plugins: { legend: { labels: { color: '#e8e8e8' } } },
    scales: {
      x: { ticks: { color: '#8a93a0' }, grid: { color: '#2a313b' } },
      y: { stacked: true, ticks: { color: '#8a93a0', callback: (v) => bytes(v) }, grid: { color: '#2a313b' } },
      share: { position: 'right', min: 0, max: 1, ticks: { color: '#4aa3df', callback: (v) => Math.round(v * 100) + '%' }, grid: { display: false } }
    }
  }
})
async function refresh () {
  const params = new URLSearchParams({ minutes: $('minutes').value })
  if ($('site').value) params.set('site', $('site').value)
  try {
    const res = await fetch('/usage?' + params, { cache: 'no-store' })
    const u = await res.json()
    if (!res.ok) throw new Error(u.error ? u.error.code + ': ' + u.error.message : res.status)
    const select = $('site')
    if ([...select.options].map((o) => o.value).join() !== u.sites.join()) {
      select.replaceChildren(...u.sites.map((s) => new Option(s, s)))
    }
    if (u.site) select.value = u.site
    $('share').textContent = Math.round(share(u.total) * 1000) / 10 + ' %'
    $('peer-bytes').textContent = bytes(u.total.peer)
    $('origin-bytes').textContent = bytes(u.total.origin)
    $('cache-bytes').textContent = bytes(u.total.cache)
    $('peers-online').textContent = u.peers
    chart.data.labels = u.minutes.map((m) => new Date(m.at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }))
    chart.data.datasets[0].data = u.minutes.map((m) => m.counts.peer)
    chart.data.datasets[1].data = u.minutes.map((m) => m.counts.origin)
    chart.data.datasets[2].data = u.minutes.map((m) => share(m.counts))
    chart.update()
    $('top-assets').tBodies[0].replaceChildren(...u.assets.map(([path, n]) => {
      const row = document.createElement('tr')
      for (const text of [path, bytes(n)]) row.insertCell().textContent = text
      return row
    }))
    $('updated').textContent = new Date().toLocaleTimeString()
    $('error').textContent = ''
  } catch (err) {
    $('error').textContent = String(err.message || err)
  }
}
$('site').onchange = refresh
$('minutes').onchange = refresh
refresh()
setInterval(refresh, 3000)
</script>
</body>
</html>
`
}
