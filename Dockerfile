# The Pet Store API as a container image. Needs BuildKit (Docker 23+, or DOCKER_BUILDKIT=1).
#
#   docker build -t petstore-api .
#   docker build -t petstore-api --secret id=ca_certs,src=corporate-ca.pem .   # behind a TLS-intercepting proxy
#
# Build arguments: NODE_IMAGE (the Node.js base image), NPM_CONFIG_REGISTRY (a registry mirror).
# Build secrets (optional, never stored in any image layer): ca_certs (extra CA certificates in
# PEM, trusted by npm during the build), npmrc (an .npmrc for npm ci, e.g. with a registry token).
# See docs/deployment.md.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compile the native SQLite driver (better-sqlite3) and the TypeScript sources --------
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# better-sqlite3 is compiled from the sources the lockfile pins (no prebuilt binary downloaded from
# outside the registry), against the headers that ship with the image's Node.js (none downloaded).
ENV npm_config_build_from_source=true \
    npm_config_nodedir=/usr/local \
    npm_config_update_notifier=false
ARG NPM_CONFIG_REGISTRY
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=ca_certs \
    --mount=type=secret,id=npmrc \
    --mount=type=cache,target=/root/.npm,sharing=locked \
    if [ -s /run/secrets/ca_certs ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca_certs; fi; \
    if [ -s /run/secrets/npmrc ]; then export NPM_CONFIG_USERCONFIG=/run/secrets/npmrc; fi; \
    if [ -n "$NPM_CONFIG_REGISTRY" ]; then export NPM_CONFIG_REGISTRY; else unset NPM_CONFIG_REGISTRY; fi; \
    npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
# Then only what runs: production dependencies (optional ones are only reached through optional
# edges: node-gyp for the native build, TypeORM's ts-node for its CLI, pg's Cloudflare socket),
# without the native build's intermediate files, source maps and TypeORM's browser build.
RUN npm run build \
 && npm prune --omit=dev --omit=optional --no-audit --no-fund \
 && rm -rf node_modules/better-sqlite3/build/Release/obj node_modules/better-sqlite3/build/Release/obj.target \
           node_modules/better-sqlite3/build/Release/.deps node_modules/better-sqlite3/build/Release/sqlite3.a \
           node_modules/better-sqlite3/build/Release/test_extension.node \
           node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
           node_modules/typeorm/browser \
 && find node_modules -name '*.map' -type f -delete \
 && rm -f dist/.tsbuildinfo

# ---- runtime base: Node.js without npm, yarn, corepack and C headers ------------------------------
FROM ${NODE_IMAGE} AS node-runtime
RUN rm -rf /usr/local/include /usr/local/lib/node_modules /opt/yarn-* \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn \
           /usr/local/bin/yarnpkg /usr/local/share/doc /usr/local/share/man /usr/local/share/systemtap \
           /usr/local/CHANGELOG.md /usr/local/README.md /usr/local/LICENSE \
 && id -u node >/dev/null \
 && mkdir -p /data \
 && chown node:node /data

# ---- runtime: one layer of base (what was removed above takes no space) plus the service ---------
FROM scratch
COPY --from=node-runtime / /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_PATH=/data/petstore.sqlite \
    SHUTDOWN_TIMEOUT_MS=8000
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# tini is PID 1 and hands signals on to the service: as PID 1 itself, Node.js would ignore a
# SIGTERM that arrives before the service has installed its handler (during start-up and
# migrations), and `docker stop` would wait for its timeout and kill it.
COPY --from=build /usr/bin/tini /usr/bin/tini
USER node
VOLUME /data
EXPOSE 3000
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const h = process.env.HOST; const host = !h || h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h.includes(':') ? `[${h}]` : h; const port = (process.env.PROCESS_ROLE || '').toLowerCase() === 'worker' ? process.env.HEALTH_PORT || 8081 : process.env.PORT || 3000; fetch(`http://${host}:${port}/health/live`, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
