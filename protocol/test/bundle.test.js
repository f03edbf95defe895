import { test } from 'node:test'
import assert from 'node:assert/strict'
import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'

test('protocol/ bundles for the browser: plain ESM, no Node-only imports', async () => {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('../index.js', import.meta.url))],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent'
  })
  const inputs = Object.keys(result.metafile.inputs)
  assert.ok(inputs.length > 1)
  for (const input of inputs) assert.match(input, /^protocol\//, `${input} is outside protocol/`)
})
