/**
 * Readers for Linux /proc: a process's CPU time and resident memory, the
 * clock-tick rate that CPU times are counted in, this process's open-files
 * limit, the pids of its children with a given command name (the Redis
 * Cluster helper does not hand out its servers' pids), and the network
 * namespace's UDP counters.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'

/** @returns {number} clock ticks per second (`getconf CLK_TCK`; 100 on Linux when that fails) */
export function clockTicksPerSecond () {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
    return Number.isInteger(ticks) && ticks > 0 ? ticks : 100
  } catch {
    return 100
  }
}

/**
 * Fields of /proc/<pid>/stat after the command name, which may itself hold
 * spaces and parentheses: element 0 is field 3 (state).
 *
 * @param {number} pid
 * @returns {string[]}
 */
function statFields (pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/**
 * @param {number} pid
 * @returns {number} user + system CPU time of the process so far, in clock ticks
 */
export function cpuTicks (pid) {
  const fields = statFields(pid)
  return Number(fields[14 - 3]) + Number(fields[15 - 3]) // utime, stime
}

/**
 * @param {number} pid
 * @returns {number} the process's resident set size (VmRSS) in bytes
 */
export function residentBytes (pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = status.match(/^VmRSS:\s+(\d+) kB$/m)?.[1]
  if (kib === undefined) throw new Error(`no VmRSS in /proc/${pid}/status (has the process exited?)`)
  return Number(kib) * 1024
}

/** @returns {number} this process's soft limit on open files (`ulimit -n`), Infinity when unlimited */
export function openFilesLimit () {
  const limits = readFileSync('/proc/self/limits', 'utf8')
  const soft = limits.match(/^Max open files\s+(\S+)/m)?.[1]
  return soft === undefined || soft === 'unlimited' ? Infinity : Number(soft)
}

/**
 * @param {number} parent
 * @param {string} name the command name as /proc/<pid>/comm has it
 * @returns {number[]} pids of the live children of `parent` with that name
 */
export function childPids (parent, name) {
  /** @type {number[]} */
  const pids = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      if (comm === name && Number(statFields(Number(entry))[4 - 3]) === parent) pids.push(Number(entry))
    } catch {
      // the process ended between readdir and read
    }
  }
  return pids
}

/**
 * CPU time of the whole machine so far, over all cores, in clock ticks
 * (/proc/stat): what all processes have spent (user + nice + system; interrupt
 * and softirq time are left out, as no process is charged for them and on
 * loopback most of it is the bench's own traffic), and what the hypervisor
 * took from this VM (steal).
 *
 * @returns {{ processes: number, steal: number }}
 */
export function machineTicks () {
  // cpu  user nice system idle iowait irq softirq steal …
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number)
  return { processes: fields[0] + fields[1] + fields[2], steal: fields[7] }
}

/**
 * The network namespace's UDP counters (Linux `/proc/net/snmp`): datagrams
 * received, and those dropped because the receiving socket's buffer was full.
 * On loopback the peers' SCTP packets arrive as fast as the sender makes them,
 * and a receiving browser that is not scheduled for a few ms (2 cores shared
 * by every browser, the origin proxy and the coordinator) drops some: each
 * such loss at a reply's end costs its channel a retransmission timeout.
 * @returns {{ datagrams: number, dropped: number } | null} null where there is no such file
 */
export function udpCounters () {
  let text = ''
  try { text = readFileSync('/proc/net/snmp', 'utf8') } catch {}
  const [names, values] = text.split('\n').filter((l) => l.startsWith('Udp:')).map((l) => l.split(/\s+/))
  if (!names || !values) return null
  const at = (/** @type {string} */ name) => Number(values[names.indexOf(name)])
  return { datagrams: at('InDatagrams'), dropped: at('RcvbufErrors') }
}
