/**
 * Reads docker-compose files and the Dockerfile the way docker-compose 1.29
 * does, for the parts this project uses, so that tests can run the topology
 * without a container engine (compose-topology.js) and check it offline.
 *
 * Compose: YAML with anchors and `<<` merges; `$$`, `${NAME}`, `${NAME:-default}`,
 * `${NAME-default}` and `$NAME` interpolated from the given environment (an empty
 * one by default, so tests see the documented defaults); later files override
 * earlier ones, `environment`, `depends_on` and `healthcheck` merged key by key,
 * `ports` and `expose` added together, every other key replaced. Commands must
 * use the list form (no shell-word splitting here).
 *
 * Dockerfile: the final stage's WORKDIR, ENV, USER, EXPOSE, CMD, ENTRYPOINT,
 * HEALTHCHECK, and every stage's COPY sources; `\` continues a line.
 */
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'

/** @typedef {{ target: number, protocol: 'tcp' | 'udp', published?: number }} PortSpec */
/** @typedef {{ condition: 'service_started' | 'service_healthy' | 'service_completed_successfully' }} Dependency */
/**
 * @typedef {object} ComposeService
 * @property {string} [image]
 * @property {unknown} [build]
 * @property {string[]} [command]
 * @property {Record<string, string>} environment
 * @property {Record<string, Dependency>} depends_on
 * @property {string[] | undefined} healthcheck the test as ['CMD', …] or ['CMD-SHELL', cmd]; undefined = none given
 * @property {PortSpec[]} ports published (`ports`) and unpublished (`expose`) container ports
 * @property {number} scale
 */

/**
 * @param {string[]} files paths, in `-f` order
 * @param {{ env?: Record<string, string | undefined> }} [options] the environment `${…}` reads
 * @returns {Promise<Record<string, ComposeService>>}
 */
export async function loadCompose (files, { env = {} } = {}) {
  /** @type {Record<string, ComposeService>} */
  const services = {}
  for (const file of files) {
    const doc = interpolate(parse(await readFile(file, 'utf8'), { merge: true }), env, file)
    for (const [name, raw] of Object.entries(doc?.services ?? {})) {
      const service = normalizeService(raw ?? {}, `${file}: service ${name}`)
      services[name] = name in services ? mergeServices(services[name], service, raw ?? {}) : service
    }
  }
  for (const [name, service] of Object.entries(services)) {
    for (const dep of Object.keys(service.depends_on)) {
      if (!(dep in services)) throw new Error(`service ${name} depends on unknown service ${dep}`)
    }
  }
  return services
}

/**
 * Compose's interpolation over every string in a parsed document.
 * @param {any} value
 * @param {Record<string, string | undefined>} env
 * @param {string} where for error messages
 * @returns {any}
 */
export function interpolate (value, env, where) {
  if (typeof value === 'string') {
    return value.replace(/\$(\$|\{([A-Za-z_]\w*)(?:(:?-)([^}]*))?\}|([A-Za-z_]\w*)|\{[^}]*\}?)/g, (all, _, braced, op, fallback, bare) => {
      if (all === '$$') return '$'
      const name = braced ?? bare
      if (name === undefined) throw new Error(`${where}: invalid interpolation ${all}`)
      const set = env[name]
      if (op === ':-') return set === undefined || set === '' ? fallback : set
      if (op === '-') return set === undefined ? fallback : set
      return set ?? ''
    })
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env, where))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, where)]))
  }
  return value
}

/**
 * @param {Record<string, any>} raw
 * @param {string} where
 * @returns {ComposeService}
 */
function normalizeService (raw, where) {
  if (raw.command !== undefined && !Array.isArray(raw.command)) throw new Error(`${where}: write command as a list`)
  /** @type {Record<string, string>} */
  const environment = {}
  /** @type {[string, unknown][]} */
  const entries = Array.isArray(raw.environment)
    ? raw.environment.map((/** @type {string} */ line) => [line.split('=')[0], line.includes('=') ? line.slice(line.indexOf('=') + 1) : null])
    : Object.entries(raw.environment ?? {})
  for (const [key, value] of entries) {
    if (value === null || value === undefined) throw new Error(`${where}: ${key} takes its value from the host; give it one`)
    environment[key] = String(value)
  }
  /** @type {Record<string, Dependency>} */
  const dependsOn = Array.isArray(raw.depends_on)
    ? Object.fromEntries(raw.depends_on.map((/** @type {string} */ n) => [n, { condition: 'service_started' }]))
    : Object.fromEntries(Object.entries(raw.depends_on ?? {}).map(([n, d]) => [n, { condition: d?.condition ?? 'service_started' }]))
  return {
    image: raw.image,
    build: raw.build,
    command: raw.command?.map(String),
    environment,
    depends_on: dependsOn,
    healthcheck: healthcheckTest(raw.healthcheck),
    ports: [...(raw.ports ?? []).map((/** @type {unknown} */ p) => parsePort(p, where)), ...(raw.expose ?? []).map((/** @type {unknown} */ p) => parsePort(String(p).split(':').pop(), where))],
    scale: raw.scale ?? 1
  }
}

/**
 * @param {ComposeService} base
 * @param {ComposeService} over normalized override
 * @param {Record<string, unknown>} raw the override as written: which keys it sets
 * @returns {ComposeService}
 */
function mergeServices (base, over, raw) {
  return {
    image: 'image' in raw ? over.image : base.image,
    build: 'build' in raw ? over.build : base.build,
    command: 'command' in raw ? over.command : base.command,
    environment: { ...base.environment, ...over.environment },
    depends_on: { ...base.depends_on, ...over.depends_on },
    healthcheck: 'healthcheck' in raw ? over.healthcheck : base.healthcheck,
    ports: [...base.ports, ...over.ports.filter((p) => !base.ports.some((b) => samePort(b, p)))],
    scale: 'scale' in raw ? over.scale : base.scale
  }
}

/**
 * @param {PortSpec} a
 * @param {PortSpec} b
 */
function samePort (a, b) {
  return a.target === b.target && a.protocol === b.protocol && a.published === b.published
}

/**
 * @param {unknown} spec `"7071:7070"`, `"3478:3478/udp"`, `"127.0.0.1:80:80"`, `"6379"`, or the long form
 * @param {string} where
 * @returns {PortSpec}
 */
export function parsePort (spec, where) {
  if (spec !== null && typeof spec === 'object') {
    const { target, published, protocol = 'tcp' } = /** @type {Record<string, any>} */ (spec)
    return { target: Number(target), protocol, ...(published === undefined ? {} : { published: Number(published) }) }
  }
  const match = /^(?:(?:[\d.]+:)?(\d+):)?(\d+)(?:\/(tcp|udp))?$/.exec(String(spec))
  if (match === null) throw new Error(`${where}: unsupported port "${spec}" (ranges and IPv6 are not handled)`)
  const protocol = /** @type {'tcp' | 'udp'} */ (match[3] ?? 'tcp')
  return { target: Number(match[2]), protocol, ...(match[1] === undefined ? {} : { published: Number(match[1]) }) }
}

/**
 * @param {unknown} healthcheck compose's `healthcheck`, or undefined
 * @returns {string[] | undefined}
 */
function healthcheckTest (healthcheck) {
  if (healthcheck === undefined || healthcheck === null) return undefined
  const { test, disable } = /** @type {{ test?: string | string[], disable?: boolean }} */ (healthcheck)
  if (disable === true) return ['NONE']
  if (typeof test === 'string') return ['CMD-SHELL', test]
  return test?.map(String)
}

/**
 * @typedef {object} Dockerfile
 * @property {{ from: string, name?: string }[]} stages
 * @property {string[]} copySources every COPY source taken from the build context
 * @property {{ from?: string, sources: string[], dest: string }[]} copies final stage: each COPY (`from`: its --from stage)
 * @property {string} workdir final stage
 * @property {Record<string, string>} env final stage
 * @property {string | undefined} user final stage
 * @property {PortSpec[]} expose final stage
 * @property {string[] | undefined} cmd final stage, exec form (shell form as sh -c)
 * @property {string[] | undefined} entrypoint final stage
 * @property {string[] | undefined} healthcheck final stage, as ['CMD', …] / ['CMD-SHELL', cmd] / ['NONE']
 */

/**
 * @param {string} path
 * @returns {Promise<Dockerfile>}
 */
export async function readDockerfile (path) {
  const lines = (await readFile(path, 'utf8')).replace(/\\\r?\n/g, ' ').split(/\r?\n/)
  /** @type {Dockerfile} */
  const file = { stages: [], copySources: [], copies: [], workdir: '/', env: {}, user: undefined, expose: [], cmd: undefined, entrypoint: undefined, healthcheck: undefined }
  for (const line of lines) {
    const trimmed = line.trim()
    if (trimmed === '' || trimmed.startsWith('#')) continue
    const [, keyword, rest] = /** @type {RegExpExecArray} */ (/^(\S+)\s*(.*)$/.exec(trimmed))
    const args = rest.trim()
    switch (keyword.toUpperCase()) {
      case 'FROM': {
        const [from, , name] = args.split(/\s+/)
        file.stages.push({ from, name })
        Object.assign(file, { copies: [], workdir: '/', env: {}, user: undefined, expose: [], cmd: undefined, entrypoint: undefined, healthcheck: undefined })
        break
      }
      case 'WORKDIR': file.workdir = args; break
      case 'USER': file.user = args; break
      case 'ENV': Object.assign(file.env, parseEnv(args)); break
      case 'EXPOSE': file.expose.push(...args.split(/\s+/).map((p) => parsePort(p, path))); break
      case 'CMD': file.cmd = commandForm(args); break
      case 'ENTRYPOINT': file.entrypoint = commandForm(args); break
      case 'HEALTHCHECK': {
        const test = args.replace(/^(--\S+\s+)*/, '')
        file.healthcheck = test === 'NONE' ? ['NONE'] : test.startsWith('CMD') ? dockerHealthcheck(test.slice(3).trim()) : undefined
        break
      }
      case 'COPY': {
        const words = args.split(/\s+/)
        const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length)
        const paths = words.filter((w) => !w.startsWith('--'))
        if (from === undefined) file.copySources.push(...paths.slice(0, -1))
        file.copies.push({ ...(from === undefined ? {} : { from }), sources: paths.slice(0, -1), dest: /** @type {string} */ (paths.at(-1)) })
        break
      }
    }
  }
  return file
}

/**
 * @param {string} args after CMD / ENTRYPOINT
 * @returns {string[]}
 */
function commandForm (args) {
  return args.startsWith('[') ? JSON.parse(args) : ['sh', '-c', args]
}

/**
 * @param {string} args after HEALTHCHECK … CMD
 * @returns {string[]}
 */
function dockerHealthcheck (args) {
  return args.startsWith('[') ? ['CMD', ...JSON.parse(args)] : ['CMD-SHELL', args]
}

/**
 * @param {string} args `K=V K2="v 2"` or `K value`
 * @returns {Record<string, string>}
 */
function parseEnv (args) {
  if (!/^[A-Za-z_]\w*=/.test(args)) {
    const [key, ...value] = args.split(/\s+/)
    return { [key]: value.join(' ') }
  }
  /** @type {Record<string, string>} */
  const env = {}
  for (const [, key, quoted, plain] of args.matchAll(/([A-Za-z_]\w*)=(?:"((?:[^"\\]|\\.)*)"|(\S*))/g)) {
    env[key] = quoted === undefined ? plain : quoted.replace(/\\(.)/g, '$1')
  }
  return env
}
