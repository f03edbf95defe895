/**
 * Preloaded into the coordinator processes the bench starts
 * (`node --expose-gc --import …`):
 * - SIGUSR2 runs a full garbage collection, so that the bench reads their
 *   resident memory without the garbage the last phase left behind;
 * - when the bench process is gone (killed with SIGKILL, say, so that it could
 *   not stop its children), the coordinator stops itself rather than linger.
 */
const parent = process.ppid

process.on('SIGUSR2', () => { globalThis.gc?.() })

setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGINT') // the bin's own quick stop
}, 1000).unref()
