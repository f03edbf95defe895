# syntax=docker/dockerfile:1
# One image for Maygh's coordinator tier and its demo shop:
#   coordinator (the default command)   docker run … maygh
#   demo shop                           docker run … maygh node demo-site/bin/maygh-demo.js
# docker-compose.yml runs both; coordinator/test/compose.test.js runs this file's
# CMD and HEALTHCHECK as local processes with the compose environment.
#
# Base: Node.js 22 LTS (the release .node-version names and CI runs),
# node:22-bookworm-slim rather than node:22-alpine. The code is pure JS (no
# native modules), so Alpine would work and is ~25 MB smaller, but slim is the
# Debian release CI tests on (same glibc and resolver: ioredis resolves the
# Redis Cluster's node names through it) and the one the redis:7 image uses.
#
# Pinned by digest, so that a build is the same build until someone moves the
# pin on purpose (a tag moves with every Node patch and Debian security fix).
# To move it (say monthly, or for a Node security release), on a machine that
# reaches Docker Hub:
#   docker buildx imagetools inspect node:22-bookworm-slim --format '{{json .Manifest.Digest}}'
# (or `docker pull node:22-bookworm-slim` and read its RepoDigests), put the
# digest below, and run the tests. `--build-arg NODE_IMAGE=…` overrides it
# for one build. A test checks the pin's form and its major version.
ARG NODE_IMAGE=node:22-bookworm-slim@sha256:43ac6c60b8f89723f746e8a92ce91abd5017e627ce1ddfe4238355d3a30b772c

# Production dependencies only (ws, ioredis, …): what the runtime stage copies.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# The browser bundles (esbuild is a dev dependency) and the demo shop's generated
# pictures, made here so the runtime image needs neither a build tool nor write
# access to its own tree.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY protocol ./protocol
COPY policy ./policy
COPY client ./client
COPY demo-site ./demo-site
RUN node client/build.js \
 && node --input-type=module -e "await (await import('./demo-site/src/images.js')).ensureGenerated()"

FROM ${NODE_IMAGE}
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
# package.json: "type": "module" makes the .js files ESM.
COPY package.json ./
COPY protocol ./protocol
COPY policy ./policy
COPY common ./common
COPY coordinator/bin ./coordinator/bin
COPY coordinator/src ./coordinator/src
COPY client/manifest.js client/bundles.js ./client/
COPY --from=build /app/dist ./dist
COPY demo-site/bin ./demo-site/bin
COPY demo-site/src ./demo-site/src
COPY demo-site/assets ./demo-site/assets
COPY --from=build /app/demo-site/.generated ./demo-site/.generated
USER node
# Coordinator: WebSocket + /healthz + /stats on 7070/tcp, STUN on 3478/udp
# (PORT and STUN_PORT move them). The demo shop listens on 8080/tcp.
EXPOSE 7070 3478/udp 8080
# The coordinator's own health; the demo service overrides it (docker-compose.yml).
# Set the port through PORT, not --port: this check reads PORT.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 7070) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# In a container the coordinator listens on every interface (HOST, which
# `-e HOST=…` or compose's environment overrides), so it must be told the STUN
# address browsers reach (ICE_SERVERS); every setting comes from the
# environment (README "Configuration"): the command carries no flags, which
# would override it.
# No ENTRYPOINT: the node image's runs the command as given, and node is PID 1,
# which is fine here because the bin stops cleanly on SIGTERM itself.
ENV HOST=0.0.0.0
CMD ["node", "coordinator/bin/maygh-coordinator.js"]
