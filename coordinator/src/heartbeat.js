/**
 * Dead-peer detection: every interval, a socket that has not answered the
 * previous ping is terminated (its close handler removes the peer from every
 * map), the others are pinged, and the store is told the joined ones are alive.
 */
export class Heartbeat {
  /**
   * @param {{ intervalMs: number, sessions: () => Iterable<import('./session.js').Session>,
   *   touch: (peerIds: string[]) => Promise<void>, warn: (err: Error, context: string) => void }} deps
   */
  constructor ({ intervalMs, sessions, touch, warn }) {
    this.intervalMs = intervalMs
    this.sessions = sessions
    this.touch = touch
    this.warn = warn
    /** @type {NodeJS.Timeout | null} */
    this.timer = null
  }

  start () {
    this.timer = setInterval(() => this.tick(), this.intervalMs)
    this.timer.unref()
  }

  /** One round: terminate the silent, ping the rest, touch the joined. */
  tick () {
    const joined = []
    for (const session of this.sessions()) {
      if (!session.alive) {
        session.ws.terminate()
        continue
      }
      session.alive = false
      session.ws.ping()
      if (session.peerId !== null) joined.push(session.peerId)
    }
    if (joined.length > 0) this.touch(joined).catch((err) => this.warn(err, 'touching peers failed'))
  }

  stop () {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }
}
