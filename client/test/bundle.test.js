import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildClient } from '../build.js'
import { BUNDLES, GZIP_BUDGETS } from '../bundles.js'

test('every bundle is one minified IIFE within its gzip budget', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-bundle-'))
  try {
    const { bundles } = await buildClient({ outdir: dir })
    assert.deepEqual(bundles.map((b) => b.file).sort(), Object.keys(BUNDLES).sort())
    for (const r of bundles) {
      const budget = GZIP_BUDGETS[/** @type {keyof typeof GZIP_BUDGETS} */ (r.file)]
      assert.ok(r.gzipBytes <= budget, `${r.file}: gzip ${r.gzipBytes} B > budget ${budget} B`)
      assert.ok(r.brotliBytes < r.gzipBytes && r.gzipBytes < r.bytes)
      const code = await readFile(r.outfile, 'utf8')
      assert.match(code, /^\(\(\)=>\{/, `${r.file}: an IIFE`)
      assert.doesNotMatch(code, /\bimport\s*[{(*]|\bexport\s*\{|require\(/, `${r.file}: no module syntax left`)
    }
    const page = await readFile(join(dir, 'maygh.js'), 'utf8')
    assert.ok(page.includes('maygh-sw.js'), 'the page script registers the worker')
    assert.ok(!page.includes('indexedDB'), 'the page script leaves the store to the worker')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
