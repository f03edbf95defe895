/**
 * Formatting for people: byte sizes, percentages, counts, plain-text tables.
 * Used by the CLI's summary and the HTML report.
 */

/**
 * @param {number} n bytes
 * @returns {string} e.g. "311.9 MB" (decimal units, as bandwidth bills use)
 */
export function formatBytes (n) {
  if (!Number.isFinite(n)) return String(n)
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB']
  let u = 0
  let v = Math.abs(n)
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000
    u++
  }
  return `${n < 0 ? '-' : ''}${u === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`
}

/**
 * @param {number} n bytes
 * @returns {string} e.g. "50 MiB", "1.5 KiB" (binary units, as the byte flags read them)
 */
export function formatBinaryBytes (n) {
  if (!Number.isFinite(n)) return String(n)
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let u = 0
  let v = n
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024
    u++
  }
  return `${Number(v.toFixed(1))} ${units[u]}`
}

/**
 * A configured size for people: binary units when it is a whole number of
 * KiB (as `50m` was typed), else the exact bytes.
 * @param {number} n bytes
 * @returns {string} e.g. "50 MiB", "12,000 bytes"
 */
export function formatSize (n) {
  return Number.isFinite(n) && n >= 1024 && n % 1024 === 0 ? formatBinaryBytes(n) : `${formatCount(n)} bytes`
}

/**
 * @param {number} x fraction
 * @param {number} [digits]
 * @returns {string} e.g. "30.4%"
 */
export function formatPercent (x, digits = 1) {
  return `${(x * 100).toFixed(digits)}%`
}

/**
 * @param {number} n
 * @returns {string} e.g. "47,748"
 */
export function formatCount (n) {
  return Math.round(n).toLocaleString('en-US')
}

/**
 * @param {number} x
 * @returns {string} a rate with sensible precision
 */
export function formatRate (x) {
  return x >= 100 ? formatCount(x) : x >= 1 ? x.toFixed(1) : x.toFixed(3)
}

/**
 * A plain-text table: first column left-aligned, the rest right-aligned.
 * @param {string[]} header
 * @param {string[][]} rows
 * @returns {string}
 */
export function textTable (header, rows) {
  const all = [header, ...rows]
  const widths = header.map((_, i) => Math.max(...all.map((r) => String(r[i] ?? '').length)))
  const line = (/** @type {string[]} */ r) => r.map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join('  ')
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}
