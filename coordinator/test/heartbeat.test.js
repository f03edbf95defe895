/**
 * The heartbeat's rounds on stand-in sessions: who is pinged, who is cut off,
 * and that a round over many sockets yields to the event loop between slices.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Heartbeat } from '../src/heartbeat.js'

/** A session as the heartbeat sees it, with a socket that counts what it is sent. */
function standIn () {
  const ws = { pings: 0, terminated: false, ping () { this.pings++ }, terminate () { this.terminated = true } }
  return { ws, heard: true, pinged: false, closed: false, closeReason: 'client' }
}

test('a busy socket is left alone, a silent one pinged, then cut off if it stays silent', async () => {
  const busy = standIn()
  const silent = standIn()
  const heartbeat = new Heartbeat({ intervalMs: 1000, sessions: () => /** @type {any} */ ([busy, silent]) })
  await heartbeat.tick()
  assert.deepEqual([busy.ws.pings, silent.ws.pings], [0, 0], 'both had sent something')
  busy.heard = true
  await heartbeat.tick()
  assert.deepEqual([busy.ws.pings, silent.ws.pings], [0, 1])
  busy.heard = true
  await heartbeat.tick()
  assert.equal(silent.ws.terminated, true)
  assert.equal(silent.closeReason, 'ping_timeout')
  assert.equal(busy.ws.terminated, false)
})

test('a round over many sockets yields between slices; a tick during a round joins it', async () => {
  const sessions = Array.from({ length: 1200 }, () => ({ ...standIn(), heard: false }))
  const heartbeat = new Heartbeat({ intervalMs: 1000, sessions: () => /** @type {any} */ (sessions) })
  const round = heartbeat.tick()
  assert.equal(heartbeat.tick(), round, 'one round at a time')
  const pingedAtOnce = sessions.filter((s) => s.ws.pings === 1).length
  assert.ok(pingedAtOnce > 0 && pingedAtOnce < sessions.length, `${pingedAtOnce} pinged before the first yield`)
  await round
  assert.equal(sessions.filter((s) => s.ws.pings === 1).length, sessions.length)
})
