// docs/simulator.md documents every error code, every flag and every default.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'
import { SIM_DEFAULTS, SIM_OPTION_SPECS } from '../src/config.js'
import { SIM_ERRORS } from '../src/errors.js'
import { ETSY_DEFAULTS } from '../src/etsy-params.js'

const doc = await readFile(new URL('../../docs/simulator.md', import.meta.url), 'utf8')

test('every error code is documented', () => {
  for (const code of Object.keys(SIM_ERRORS)) assert.ok(doc.includes(`\`${code}\``), `${code} missing from docs/simulator.md`)
})

test('every model flag is documented with its default', () => {
  for (const [key, spec] of Object.entries(SIM_OPTION_SPECS)) {
    const row = doc.split('\n').find((line) => line.startsWith(`| \`--${spec.flag}\``))
    assert.ok(row, `--${spec.flag} has no row in docs/simulator.md`)
    const def = /** @type {any} */ (SIM_DEFAULTS)[key]
    const shown = def === Infinity ? 'inf' : def === '' ? "''" : key === 'quotaBytes' ? '50m' : key === 'uploadBurst' ? '4m' : String(def)
    assert.ok(row.includes(`\`${shown}\``), `--${spec.flag}: default ${shown} not in "${row}"`)
  }
})

test('every generator parameter is documented with its default', () => {
  for (const [key, def] of Object.entries(ETSY_DEFAULTS)) {
    const flag = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
    const row = doc.split('\n').find((line) => line.startsWith(`| \`--${flag}\``))
    assert.ok(row, `--${flag} has no row in docs/simulator.md`)
    assert.ok(row.includes(`\`${def}\``), `--${flag}: default ${def} not in "${row}"`)
  }
})
