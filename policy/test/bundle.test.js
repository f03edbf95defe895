// policy/ is bundled into the browser client (hedge-rule.js, budgets.js) as well as run by Node:
// plain ESM, no Node-only imports, nothing from outside policy/ and protocol/.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'

const dir = fileURLToPath(new URL('..', import.meta.url))

test('policy/ bundles for the browser: plain ESM, no Node-only imports, only policy/ and protocol/', async () => {
  const modules = readdirSync(dir).filter((f) => f.endsWith('.js'))
  assert.ok(modules.length >= 4, modules.join(', '))
  const result = await build({
    entryPoints: modules.map((f) => fileURLToPath(new URL(`../${f}`, import.meta.url))),
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    outdir: 'out',
    metafile: true,
    logLevel: 'silent'
  })
  const inputs = Object.keys(result.metafile.inputs)
  for (const input of inputs) assert.match(input, /^(policy|protocol)\//, `${input} is outside policy/ and protocol/`)
})
