/**
 * The translation from a compose network to local processes on loopback: every
 * service host name becomes 127.0.0.1 and every container port a free local
 * port of its own. The rule, applied to each command argument, environment
 * value and health-check argument of a service S:
 *
 * 1. `NAME:PORT` where NAME is a service and PORT one of its container ports
 *    (`ports` or `expose`) → `127.0.0.1:LOCAL` (e.g. REDIS_URL's node list);
 * 2. `localhost:PORT` or `127.0.0.1:PORT` → S's own LOCAL when PORT is one of
 *    S's container ports (inside a container, loopback is the container),
 *    else, when PORT is a host port some service publishes, that service's
 *    LOCAL (what a browser on the host reaches: ICE_SERVERS, COORDINATOR_URL);
 * 3. a whole value that is one of S's container ports → its LOCAL (PORT=7070,
 *    `--port 6379`);
 * 4. a whole value `0.0.0.0` (listen everywhere) → 127.0.0.1.
 *
 * Anything else is left alone: a host name without a port (write `redis-1:6379`,
 * e.g. `redis-cli -u redis://redis-1:6379`), and a port that a program takes
 * only from its own default, so the compose file names every port it relies on.
 * Not handled: IPv6 literals, port ranges, and a service whose TCP and UDP ports
 * share a number (it throws).
 */
import { createSocket } from 'node:dgram'
import { createServer } from 'node:net'

/** @typedef {import('./compose-files.js').ComposeService} ComposeService */
/** @typedef {import('./compose-files.js').PortSpec & { local: number }} LocalPort */

/**
 * Pick a distinct free loopback port for every container port of every service
 * (all sockets are held open until the last is chosen, so none repeats).
 *
 * @param {Record<string, ComposeService>} services
 * @returns {Promise<Record<string, LocalPort[]>>}
 */
export async function allocateLocalPorts (services) {
  /** @type {{ close: () => void }[]} */
  const held = []
  /** @type {Record<string, LocalPort[]>} */
  const ports = {}
  try {
    for (const [name, service] of Object.entries(services)) {
      ports[name] = []
      for (const spec of service.ports) {
        // One local port per container port, however many times it is listed (ports, expose).
        const same = ports[name].find((p) => p.target === spec.target && p.protocol === spec.protocol)
        if (same !== undefined) {
          same.published ??= spec.published
          continue
        }
        const { local, close } = await holdFreePort(spec.protocol)
        held.push({ close })
        ports[name].push({ ...spec, local })
      }
    }
  } finally {
    for (const socket of held) socket.close()
  }
  return ports
}

/**
 * @param {'tcp' | 'udp'} protocol
 * @returns {Promise<{ local: number, close: () => void }>}
 */
async function holdFreePort (protocol) {
  if (protocol === 'udp') {
    const socket = createSocket('udp4')
    await new Promise((resolve) => socket.bind(0, '127.0.0.1', () => resolve(undefined)))
    return { local: socket.address().port, close: () => socket.close() }
  }
  const server = createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  return { local: /** @type {import('node:net').AddressInfo} */ (server.address()).port, close: () => server.close() }
}

/**
 * @param {Record<string, LocalPort[]>} ports from {@link allocateLocalPorts}
 * @returns {(service: string, value: string) => string} the rule above, for values of `service`
 */
export function addressTranslator (ports) {
  for (const [name, list] of Object.entries(ports)) {
    const numbers = list.map((p) => p.target)
    if (new Set(numbers).size !== numbers.length) throw new Error(`service ${name}: a TCP and a UDP port share a number; the translation cannot tell them apart`)
  }
  /** @type {Map<number, number>} host port → local port */
  const published = new Map()
  for (const [name, list] of Object.entries(ports)) {
    for (const p of list) {
      if (p.published === undefined) continue
      if (published.has(p.published)) throw new Error(`host port ${p.published} is published twice (again by ${name})`)
      published.set(p.published, p.local)
    }
  }
  const own = (/** @type {string} */ service, /** @type {number} */ port) => ports[service]?.find((p) => p.target === port)?.local

  return (service, value) => {
    if (value === '0.0.0.0') return '127.0.0.1'
    if (/^\d+$/.test(value) && own(service, Number(value)) !== undefined) return String(own(service, Number(value)))
    return value.replace(/(?<![\w.-])([A-Za-z0-9][\w.-]*):(\d+)(?![\w.])/g, (all, host, digits) => {
      const port = Number(digits)
      let local
      if (host === 'localhost' || host === '127.0.0.1') local = own(service, port) ?? published.get(port)
      else if (host in ports) local = own(host, port)
      return local === undefined ? all : `127.0.0.1:${local}`
    })
  }
}
