// Trace parsers: the real shared traces (counts as in their README), bad lines, gzip, zip, CSV quoting.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import zlib from 'node:zlib'
import { FLAG_ASSET, FLAG_PAGE } from '../src/batch.js'
import { TraceReader, detectFormat } from '../src/input/trace-reader.js'

const TRACES = fileURLToPath(new URL('../../../shared/traces/', import.meta.url))
const haveTraces = existsSync(join(TRACES, 'epa-http.zip'))
const skipTraces = haveTraces ? false : `shared traces not found at ${TRACES}; these tests need ../shared/traces beside the repo`

/** @type {string} */
let dir
before(async () => { dir = await mkdtemp(join(tmpdir(), 'maygh-sim-')) })
after(async () => { await rm(dir, { recursive: true, force: true }) })

/**
 * Reads a whole trace into plain arrays. These tests are about parsing: by
 * default every successful GET counts and any time order is accepted
 * (order.test.js and assets.test.js test those).
 * @param {string} path
 * @param {object} [options]
 */
async function readAll (path, options) {
  const reader = new TraceReader(path, { assets: 'all', orderTolerance: Infinity, ...options })
  /** @type {{ ts: number[], client: number[], object: number[], bytes: number[], flags: number[] }} */
  const out = { ts: [], client: [], object: [], bytes: [], flags: [] }
  for await (const b of reader.batches()) {
    for (let i = 0; i < b.n; i++) {
      out.ts.push(b.ts[i])
      out.client.push(b.client[i])
      out.object.push(b.object[i])
      out.bytes.push(b.bytes[i])
      out.flags.push(b.flags[i])
    }
  }
  return { reader, ...out }
}

/**
 * A .zip holding the given files, deflated or stored, optionally with sizes
 * deferred to a data descriptor (as the EPA archive has them).
 * @param {{ name: string, data: Buffer, method?: 0 | 8, descriptor?: boolean }[]} files
 * @returns {Buffer}
 */
function makeZip (files) {
  const parts = []
  const central = []
  let offset = 0
  for (const f of files) {
    const method = f.method ?? 8
    const body = method === 8 ? zlib.deflateRawSync(f.data) : f.data
    const crc = typeof zlib.crc32 === 'function' ? zlib.crc32(f.data) : 0
    const name = Buffer.from(f.name)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(f.descriptor ? 8 : 0, 6)
    local.writeUInt16LE(method, 8)
    local.writeUInt32LE(f.descriptor ? 0 : crc, 14)
    local.writeUInt32LE(f.descriptor ? 0 : body.length, 18)
    local.writeUInt32LE(f.descriptor ? 0 : f.data.length, 22)
    local.writeUInt16LE(name.length, 26)
    const desc = Buffer.alloc(f.descriptor ? 16 : 0)
    if (f.descriptor) {
      desc.writeUInt32LE(0x08074b50, 0)
      desc.writeUInt32LE(crc, 4)
      desc.writeUInt32LE(body.length, 8)
      desc.writeUInt32LE(f.data.length, 12)
    }
    parts.push(local, name, body, desc)
    const cen = Buffer.alloc(46)
    cen.writeUInt32LE(0x02014b50, 0)
    cen.writeUInt16LE(20, 4)
    cen.writeUInt16LE(20, 6)
    cen.writeUInt16LE(f.descriptor ? 8 : 0, 8)
    cen.writeUInt16LE(method, 10)
    cen.writeUInt32LE(crc, 16)
    cen.writeUInt32LE(body.length, 20)
    cen.writeUInt32LE(f.data.length, 24)
    cen.writeUInt16LE(name.length, 28)
    cen.writeUInt32LE(offset, 42)
    central.push(cen, name)
    offset += local.length + name.length + body.length + desc.length
  }
  const cd = Buffer.concat(central)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(files.length, 8)
  end.writeUInt16LE(files.length, 10)
  end.writeUInt32LE(cd.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...parts, cd, end])
}

const CLF = [
  '199.72.81.55 - - [01/Jul/1995:00:00:01 -0400] "GET /history/apollo/ HTTP/1.0" 200 6245',
  'unicomp6.unicomp.net - - [01/Jul/1995:00:00:06 -0400] "GET /shuttle/countdown/ HTTP/1.0" 200 3985',
  '199.72.81.55 - - [01/Jul/1995:00:00:09 -0400] "GET /history/apollo/ HTTP/1.0" 304 0',
  'this line is not a log line',
  '10.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"',
  '10.0.0.2 - - [10/Oct/2000:13:55:37 +0000] "POST /form HTTP/1.1" 200 12',
  '10.0.0.3 - - [32/Oct/2000:13:55:37 +0000] "GET /bad-day HTTP/1.1" 200 12',
  '10.0.0.4 - - [10/Oct/2000:13:55:38 +0000] "GET /x HTTP/1.1" 200 -',
  '10.0.0.5 - - [10/Oct/2000:13:55:39 +0000] "GET /quoted\\" HTTP/1.1" 200 5',
  ''
]

test('CLF and Combined lines parse; bad lines are counted with examples, never fatal', async () => {
  const path = join(dir, 'access.log')
  await writeFile(path, CLF.join('\r\n') + '10.0.0.6 - - [10/Oct/2000:13:55:40 +0000] "GET /last HTTP/1.1" 200 7')
  const { reader, ts, bytes, flags, client, object } = await readAll(path)
  const s = /** @type {{ format: string, parsedRequests: number, badLines: number, badExamples: { line: number, text: string }[], clients: number, objects: number }} */ (reader.summary())
  assert.equal(s.format, 'clf')
  assert.equal(s.parsedRequests, 8)
  assert.equal(s.badLines, 2)
  assert.deepEqual(s.badExamples.map((b) => b.line), [4, 7])
  assert.equal(s.badExamples[0].text, 'this line is not a log line')
  assert.equal(ts[0], Date.UTC(1995, 6, 1, 4, 0, 1) / 1000)
  assert.equal(ts[3], Date.UTC(2000, 9, 10, 20, 55, 36) / 1000) // -0700
  assert.deepEqual(bytes, [6245, 3985, 0, 2326, 12, 0, 5, 7])
  // assets: 200 GETs with bytes; not the 304, the POST, or the 200 with "-"; page views: GETs of
  // pages (no extension here) answered 200 or 304, whatever their bytes
  const P = FLAG_PAGE
  assert.deepEqual(flags, [FLAG_ASSET | P, FLAG_ASSET | P, P, FLAG_ASSET, 0, P, FLAG_ASSET | P, FLAG_ASSET | P])
  assert.equal(client[0], client[2])
  assert.equal(object[0], object[2])
  assert.equal(s.clients, 7)
  assert.equal(s.objects, 7)
})

test('gzip and plain give the same requests; a truncated gzip is a coded error', async () => {
  const text = CLF.join('\n')
  await writeFile(join(dir, 'a.log'), text)
  await writeFile(join(dir, 'a.log.gz'), zlib.gzipSync(text))
  const plain = await readAll(join(dir, 'a.log'))
  const gz = await readAll(join(dir, 'a.log.gz'))
  assert.equal(gz.reader.summary().compression, 'gzip')
  assert.deepEqual(gz.ts, plain.ts)
  assert.deepEqual(gz.bytes, plain.bytes)
  const full = zlib.gzipSync(Buffer.from(text.repeat(200)))
  await writeFile(join(dir, 'cut.log.gz'), full.subarray(0, full.length - 30))
  await assert.rejects(readAll(join(dir, 'cut.log.gz')), { code: 'MGH_SIM_ERR_DECOMPRESS' })
})

test('zip archives: deflated or stored, sizes in a data descriptor; one file only', async () => {
  const data = Buffer.from(CLF.join('\n'))
  for (const [name, f] of /** @type {const} */ ([['d.zip', { method: 8, descriptor: true }], ['s.zip', { method: 0, descriptor: false }]])) {
    await writeFile(join(dir, name), makeZip([{ name: 'access.log', data, ...f }]))
    const { reader, bytes } = await readAll(join(dir, name))
    assert.equal(reader.summary().compression, 'zip')
    assert.equal(reader.summary().zipEntry, 'access.log')
    assert.deepEqual(bytes, [6245, 3985, 0, 2326, 12, 0, 5])
  }
  await writeFile(join(dir, 'two.zip'), makeZip([{ name: 'a.log', data }, { name: 'b.log', data }]))
  await assert.rejects(readAll(join(dir, 'two.zip')), { code: 'MGH_SIM_ERR_ZIP', message: /found 2: a.log, b.log/ })
  await writeFile(join(dir, 'junk.zip'), Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(100)]))
  await assert.rejects(readAll(join(dir, 'junk.zip')), { code: 'MGH_SIM_ERR_ZIP' })
})

test('CSV: header in any order, quoted fields, fractional times, empty bytes, bad rows', async () => {
  const path = join(dir, 't.csv')
  await writeFile(path, [
    '\ufeffurl,ts_unix,client,bytes,status,method', // with a byte-order mark, as spreadsheets write it
    '/a.png,100,c1,10,200,GET',
    '"/cgi-bin/imagemap/x?1,2",100.5,c2,,302,GET',
    '"/say ""hi"".gif",101,c1,30,200,GET',
    '/a.png,102,c3,10,200,POST',
    '/a.png,oops,c3,10,200,GET',
    '/short,103',
    '/b.png,104,c3,-,200,GET'
  ].join('\n'))
  const { reader, ts, bytes, flags, object, client } = await readAll(path)
  const s = reader.summary()
  assert.equal(s.format, 'csv')
  assert.equal(s.parsedRequests, 5)
  assert.equal(s.badLines, 2)
  assert.deepEqual(ts, [100, 100.5, 101, 102, 104])
  assert.deepEqual(bytes, [10, 0, 30, 10, 0])
  assert.deepEqual(flags, [FLAG_ASSET, 0, FLAG_ASSET, 0, 0])
  assert.equal(reader.urls.string(object[1]), '/cgi-bin/imagemap/x?1,2')
  assert.equal(reader.urls.string(object[2]), '/say "hi".gif')
  assert.equal(client[0], client[2])
  await writeFile(join(dir, 'bad-header.csv'), 'time,client,url,status,bytes\n1,a,/x,200,5\n')
  await assert.rejects(readAll(join(dir, 'bad-header.csv'), { format: 'csv' }), { code: 'MGH_SIM_ERR_CSV_HEADER', message: /ts_unix/ })
})

test('the --assets pattern limits what Maygh may serve', async () => {
  const path = join(dir, 'assets.log')
  await writeFile(path, CLF.join('\n'))
  const { flags } = await readAll(path, { assets: '\\.gif$' })
  assert.deepEqual(flags, [FLAG_PAGE, FLAG_PAGE, FLAG_PAGE, FLAG_ASSET, 0, FLAG_PAGE, FLAG_PAGE])
})

test('the time zone: CLF lines that agree give theirs, EPA its implied EDT, CSV and mixed CLF none (UTC)', async () => {
  const one = join(dir, 'zone.log')
  await writeFile(one, CLF.slice(0, 3).join('\n'))
  assert.equal((await readAll(one)).reader.summary().utcOffsetMinutes, -240)
  const mixed = join(dir, 'mixed.log')
  await writeFile(mixed, CLF.join('\n'))
  assert.equal((await readAll(mixed)).reader.summary().utcOffsetMinutes, null)
  const epa = join(dir, 'zone.epa')
  await writeFile(epa, '141.243.1.172 [29:23:53:25] "GET /Software.html HTTP/1.0" 200 1497\n')
  assert.equal((await readAll(epa)).reader.summary().utcOffsetMinutes, -240)
  const csv = join(dir, 'zone.csv')
  await writeFile(csv, 'ts_unix,client,url,status,bytes\n1,a,/x.gif,200,5\n')
  assert.equal((await readAll(csv)).reader.summary().utcOffsetMinutes, null)
})

test('lines split across read chunks are joined', () => {
  const reader = new TraceReader('unused', { format: 'clf' })
  reader.parser = null
  const text = Buffer.from(CLF.slice(0, 3).join('\n') + '\n')
  for (let i = 0; i < text.length; i += 7) reader.chunk(text.subarray(i, Math.min(text.length, i + 7)))
  assert.equal(reader.requests, 3)
  assert.equal(reader.badLines, 0)
})

test('format detection', () => {
  assert.equal(detectFormat('ts_unix,client,url,status,bytes,method'), 'csv')
  assert.equal(detectFormat('141.243.1.172 [29:23:53:25] "GET /Software.html HTTP/1.0" 200 1497'), 'epa')
  assert.equal(detectFormat(CLF[0]), 'clf')
  assert.equal(detectFormat('# comment'), null)
})

test('EPA-HTTP zip: 47,748 requests from 2,333 clients, as its README says', { skip: skipTraces }, async () => {
  const { reader, object, ts } = await readAll(join(TRACES, 'epa-http.zip'))
  const s = reader.summary()
  assert.equal(s.format, 'epa')
  assert.equal(s.compression, 'zip')
  assert.equal(s.parsedRequests, 47_748)
  assert.equal(s.badLines, 0)
  assert.equal(s.clients, 2_333)
  assert.equal(s.objects, 6_561)
  // README: "59% of objects are requested once"
  const counts = new Map()
  for (const o of object) counts.set(o, (counts.get(o) ?? 0) + 1)
  const once = [...counts.values()].filter((n) => n === 1).length / counts.size
  assert.ok(Math.abs(once - 0.59) < 0.01, `once-requested share ${once}`)
  // 29:23:53:25 EDT = 1995-08-30 03:53:25 UTC
  assert.equal(ts[0], Date.UTC(1995, 7, 30, 3, 53, 25) / 1000)
  assert.ok(ts[ts.length - 1] - ts[0] < 86_400 + 3600, 'about 24 hours')
})

test('EPA-HTTP normalized CSV holds the same requests as the zip', { skip: skipTraces }, async () => {
  const zip = await readAll(join(TRACES, 'epa-http.zip'))
  const csv = await readAll(join(TRACES, 'epa_http_19950830.csv.gz'))
  const s = csv.reader.summary()
  assert.equal(s.format, 'csv')
  assert.equal(s.parsedRequests, 47_748)
  assert.equal(s.clients, 2_333)
  assert.equal(s.objects, 6_561)
  // the CSV is sorted by time, the raw log is in write order: compare as multisets
  const sorted = (/** @type {number[]} */ a) => [...a].sort((x, y) => x - y)
  assert.deepEqual(sorted(csv.ts), sorted(zip.ts))
  assert.deepEqual(sorted(csv.bytes), sorted(zip.bytes))
  assert.equal(csv.flags.filter(Boolean).length, zip.flags.filter(Boolean).length)
})

for (const [file, clients, objects] of /** @type {const} */ ([['nasa_19950701_first10k.log.gz', 936, 1165], ['nasa_19950801_first10k.log.gz', 853, 1323]])) {
  // README: the first 9,999 requests of each month; clients and objects counted with `sort -u`.
  test(`NASA-HTTP ${file}: 9,999 requests`, { skip: skipTraces }, async () => {
    const { reader } = await readAll(join(TRACES, file))
    const s = reader.summary()
    assert.equal(s.format, 'clf')
    assert.equal(s.parsedRequests, 9_999)
    assert.equal(s.badLines, 0)
    assert.equal(s.clients, clients)
    assert.equal(s.objects, objects)
  })
}
