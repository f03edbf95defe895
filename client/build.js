#!/usr/bin/env node
/**
 * Builds the browser bundle `client/dist/maygh.js` (one IIFE, ES2020) and
 * measures it: `node client/build.js` prints raw, gzip and brotli sizes.
 * The budget is 10 KB gzipped; client/test/bundle.test.js enforces it.
 */
import { build } from 'esbuild'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { dirname, join, relative } from 'node:path'
import { gzipSync, brotliCompressSync, constants } from 'node:zlib'

const here = dirname(fileURLToPath(import.meta.url))

/** Gzip size limit in bytes that the bundle must stay within. */
export const GZIP_BUDGET = 10240

/**
 * @param {{ outfile?: string, minify?: boolean }} [options]
 * @returns {Promise<{ outfile: string, bytes: number, gzipBytes: number, brotliBytes: number }>}
 */
export async function buildClient ({ outfile = join(here, 'dist', 'maygh.js'), minify = true } = {}) {
  await build({
    entryPoints: [join(here, 'src', 'index.js')],
    outfile,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify,
    legalComments: 'none',
    logLevel: 'warning'
  })
  const code = await readFile(outfile)
  return {
    outfile,
    bytes: code.length,
    gzipBytes: gzipSync(code, { level: 9 }).length,
    brotliBytes: brotliCompressSync(code, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await buildClient()
  const kb = (/** @type {number} */ n) => (n / 1024).toFixed(1) + ' KB'
  console.log(`${relative(process.cwd(), r.outfile)}: ${kb(r.bytes)} raw, ${kb(r.gzipBytes)} gzip, ${kb(r.brotliBytes)} brotli (budget ${kb(GZIP_BUDGET)} gzip)`)
  if (r.gzipBytes > GZIP_BUDGET) process.exitCode = 1
}
