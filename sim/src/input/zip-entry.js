/**
 * Finds the one file in a .zip archive and streams it, decompressed, using
 * only node:zlib: the end-of-central-directory record gives the central
 * directory, whose entry gives the sizes (the local header may defer them to a
 * data descriptor) and the local header's offset; the data after that header
 * is raw deflate (method 8) or stored (method 0). Zip64 and encryption are
 * refused with MGH_SIM_ERR_ZIP.
 */
import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { Readable, pipeline } from 'node:stream'
import { createInflateRaw } from 'node:zlib'
import { ERRORS, MayghError } from '../../../protocol/index.js'

const EOCD_SIG = 0x06054b50
const CEN_SIG = 0x02014b50
const LOC_SIG = 0x04034b50

/** @typedef {{ name: string, method: number, flags: number, compressedSize: number, size: number, localOffset: number }} ZipEntry */

/**
 * Lists the archive's file entries (directories left out).
 * @param {import('node:fs/promises').FileHandle} fh
 * @param {number} fileSize
 * @returns {Promise<ZipEntry[]>}
 */
export async function listZip (fh, fileSize) {
  const tailLen = Math.min(fileSize, 65535 + 22)
  const tail = Buffer.alloc(tailLen)
  await fh.read(tail, 0, tailLen, fileSize - tailLen)
  let at = -1
  for (let i = tailLen - 22; i >= 0; i--) if (tail.readUInt32LE(i) === EOCD_SIG) { at = i; break }
  if (at === -1) throw new MayghError(ERRORS.MGH_SIM_ERR_ZIP, 'no end-of-central-directory record')
  const count = tail.readUInt16LE(at + 10)
  const cdSize = tail.readUInt32LE(at + 12)
  const cdOffset = tail.readUInt32LE(at + 16)
  if (count === 0xffff || cdOffset === 0xffffffff) throw new MayghError(ERRORS.MGH_SIM_ERR_ZIP, 'zip64 archives are not supported; unzip it first')
  if (cdOffset + cdSize > fileSize) throw new MayghError(ERRORS.MGH_SIM_ERR_ZIP, 'central directory past the end of the file')
  const cd = Buffer.alloc(cdSize)
  await fh.read(cd, 0, cdSize, cdOffset)
  /** @type {ZipEntry[]} */
  const entries = []
  let p = 0
  for (let i = 0; i < count; i++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== CEN_SIG) throw new MayghError(ERRORS.MGH_SIM_ERR_ZIP, 'damaged central directory')
    const nameLen = cd.readUInt16LE(p + 28)
    const entry = {
      name: cd.toString('utf8', p + 46, p + 46 + nameLen),
      flags: cd.readUInt16LE(p + 8),
      method: cd.readUInt16LE(p + 10),
      compressedSize: cd.readUInt32LE(p + 20),
      size: cd.readUInt32LE(p + 24),
      localOffset: cd.readUInt32LE(p + 42)
    }
    p += 46 + nameLen + cd.readUInt16LE(p + 30) + cd.readUInt16LE(p + 32)
    if (!entry.name.endsWith('/') && !entry.name.startsWith('__MACOSX/')) entries.push(entry)
  }
  return entries
}

/**
 * Opens the archive's single file as a readable stream of decompressed bytes.
 * @param {string} path
 * @param {number} fileSize
 * @param {(n: number) => void} onRead called with compressed bytes read, for progress
 * @returns {Promise<{ stream: NodeJS.ReadableStream, entry: ZipEntry }>}
 */
export async function openZipEntry (path, fileSize, onRead) {
  const fh = await open(path, 'r')
  let entry, dataStart
  try {
    const entries = await listZip(fh, fileSize)
    if (entries.length !== 1) {
      throw new MayghError(ERRORS.MGH_SIM_ERR_ZIP, `expected one file in the archive, found ${entries.length}: ${entries.slice(0, 5).map((e) => e.name).join(', ')}`)
    }
    entry = entries[0]
    if (entry.flags & 1) throw new MayghError(ERRORS.MGH_SIM_ERR_ZIP, `${entry.name} is encrypted`)
    if (entry.method !== 0 && entry.method !== 8) throw new MayghError(ERRORS.MGH_SIM_ERR_ZIP, `${entry.name} uses compression method ${entry.method}; only deflate and stored are supported`)
    if (entry.compressedSize === 0xffffffff || entry.size === 0xffffffff) throw new MayghError(ERRORS.MGH_SIM_ERR_ZIP, 'zip64 entries are not supported; unzip it first')
    const loc = Buffer.alloc(30)
    await fh.read(loc, 0, 30, entry.localOffset)
    if (loc.readUInt32LE(0) !== LOC_SIG) throw new MayghError(ERRORS.MGH_SIM_ERR_ZIP, 'damaged local file header')
    dataStart = entry.localOffset + 30 + loc.readUInt16LE(26) + loc.readUInt16LE(28)
  } finally {
    await fh.close()
  }
  if (entry.compressedSize === 0) {
    return { stream: Readable.from([]), entry }
  }
  const raw = createReadStream(path, { start: dataStart, end: dataStart + entry.compressedSize - 1, highWaterMark: 1 << 20 })
  raw.on('data', (c) => onRead(c.length))
  if (entry.method === 0) return { stream: raw, entry }
  const inflate = createInflateRaw({ chunkSize: 1 << 20 })
  return { stream: pipeline(raw, inflate, () => {}), entry }
}
