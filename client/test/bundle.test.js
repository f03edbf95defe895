import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildClient, GZIP_BUDGET } from '../build.js'

test(`the bundle is one minified IIFE within the ${GZIP_BUDGET / 1024} KB gzip budget`, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-bundle-'))
  try {
    const r = await buildClient({ outfile: join(dir, 'maygh.js') })
    assert.ok(r.gzipBytes <= GZIP_BUDGET, `gzip ${r.gzipBytes} B > budget ${GZIP_BUDGET} B`)
    assert.ok(r.brotliBytes < r.gzipBytes && r.gzipBytes < r.bytes)
    const code = await readFile(r.outfile, 'utf8')
    assert.match(code, /^\(\(\)=>\{/, 'an IIFE')
    assert.doesNotMatch(code, /\bimport\s*[{(*]|\bexport\s*\{|require\(/, 'no module syntax left')
    assert.ok(code.includes('maygh'), 'has the data channel label')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
