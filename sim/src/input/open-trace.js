/**
 * Opens a trace file as a stream of decompressed bytes, whatever its wrapping:
 * gzip (magic 1f 8b), zip (magic PK\3\4, one file inside) or plain. The file is
 * streamed, never read whole; `progress()` reports the share of the file read.
 */
import { createReadStream } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { pipeline } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { ERRORS, MayghError } from '../../../protocol/index.js'
import { openZipEntry } from './zip-entry.js'

/**
 * @typedef {object} OpenedTrace
 * @property {AsyncIterable<Buffer>} stream decompressed bytes
 * @property {'gzip' | 'zip' | 'none'} compression
 * @property {string | null} entry the file's name inside a zip
 * @property {() => number} progress fraction of the file read so far, 0–1
 */

/**
 * @param {string} path
 * @returns {Promise<OpenedTrace>}
 */
export async function openTrace (path) {
  let size, magic
  try {
    const st = await stat(path)
    if (!st.isFile()) throw new MayghError(ERRORS.MGH_SIM_ERR_TRACE_OPEN, `${path} is not a file`)
    size = st.size
    const fh = await open(path, 'r')
    magic = Buffer.alloc(4)
    await fh.read(magic, 0, 4, 0)
    await fh.close()
  } catch (err) {
    if (err instanceof MayghError) throw err
    throw new MayghError(ERRORS.MGH_SIM_ERR_TRACE_OPEN, `${path}: ${/** @type {Error} */ (err).message}`)
  }
  let read = 0
  const progress = () => (size === 0 ? 1 : Math.min(1, read / size))
  const onRead = (/** @type {number} */ n) => { read += n }
  if (magic[0] === 0x50 && magic[1] === 0x4b && magic[2] === 3 && magic[3] === 4) {
    const { stream, entry } = await openZipEntry(path, size, onRead)
    return { stream: wrapErrors(stream), compression: 'zip', entry: entry.name, progress }
  }
  const raw = createReadStream(path, { highWaterMark: 1 << 20 })
  raw.on('data', (c) => onRead(c.length))
  if (magic[0] === 0x1f && magic[1] === 0x8b) {
    const gunzip = createGunzip({ chunkSize: 1 << 20 })
    return { stream: wrapErrors(pipeline(raw, gunzip, () => {})), compression: 'gzip', entry: null, progress }
  }
  return { stream: wrapErrors(raw), compression: 'none', entry: null, progress }
}

/**
 * Re-throws zlib failures as MGH_SIM_ERR_DECOMPRESS, read failures as MGH_SIM_ERR_TRACE_OPEN.
 * @param {NodeJS.ReadableStream} stream
 * @returns {AsyncIterable<Buffer>}
 */
async function * wrapErrors (stream) {
  try {
    for await (const chunk of stream) yield /** @type {Buffer} */ (chunk)
  } catch (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err)
    if (typeof e.code === 'string' && e.code.startsWith('Z_')) throw new MayghError(ERRORS.MGH_SIM_ERR_DECOMPRESS, e.message, { cause: err })
    throw new MayghError(ERRORS.MGH_SIM_ERR_TRACE_OPEN, e.message, { cause: err })
  }
}
