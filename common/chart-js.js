/**
 * Chart.js's UMD build, read from node_modules: what the coordinator's
 * dashboard serves beside itself and what the simulator's report inlines.
 * Here in common/, not in either component, so that whatever draws charts
 * takes it without reaching into another's src/.
 */
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/**
 * The Chart.js UMD build's source.
 * @returns {Promise<string>}
 * @throws {Error} when the package or its UMD build is missing
 */
export async function loadChartJs () {
  let dir
  try {
    dir = dirname(createRequire(import.meta.url).resolve('chart.js'))
  } catch {
    throw new Error('the chart.js package is not installed (npm install)')
  }
  for (const name of ['chart.umd.min.js', 'chart.umd.js']) {
    try {
      return await readFile(join(dir, name), 'utf8')
    } catch {}
  }
  throw new Error(`no UMD build of chart.js in ${dir}`)
}
