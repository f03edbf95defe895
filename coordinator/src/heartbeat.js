/**
 * Dead-socket detection: every interval, a socket that has not answered the
 * previous ping is terminated (its close handler removes the peer from every
 * map) and the others are pinged. (A peer's liveness in the store is its
 * shard's: presence.js.)
 */
export class Heartbeat {
  /**
   * @param {{ intervalMs: number, sessions: () => Iterable<import('./session.js').Session> }} deps
   */
  constructor ({ intervalMs, sessions }) {
    this.intervalMs = intervalMs
    this.sessions = sessions
    /** @type {NodeJS.Timeout | null} */
    this.timer = null
  }

  start () {
    this.timer = setInterval(() => this.tick(), this.intervalMs)
    this.timer.unref()
  }

  /** One round: terminate the silent, ping the rest. */
  tick () {
    for (const session of this.sessions()) {
      if (!session.alive) {
        session.closeReason = 'ping_timeout'
        session.ws.terminate()
        continue
      }
      session.alive = false
      session.ws.ping()
    }
  }

  stop () {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }
}
