# One image for every role of payroute:
#   docker build -t payroute .
#   docker run payroute migrate                      apply pending migrations, then exit
#   docker run payroute admin                        admin process (Koa) on ADMIN_PORT (3000)
#   docker run payroute proxy                        proxy process (the public front door) on PROXY_PORT (3001)
#   docker run payroute cli users create --email E   operator CLI (one JSON object on stdout)
# The README shows both processes against PostgreSQL.
#
# TypeScript runs through tsx, a production dependency, so `npm ci --omit=dev` is enough: no compile step, no dev
# dependencies (the devDependency `node@22.23.3` only exists for machines whose system Node is older; the image's
# own Node 22 runs everything). No compiler is needed: better-sqlite3 and secp256k1 ship N-API prebuilds inside
# their packages (secp256k1 falls back to its pure-JS build where none fits, and ws's optional accelerators may be
# skipped).

FROM node:22-slim AS deps
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:22-slim AS runtime
WORKDIR /app
# HOST=0.0.0.0: inside a container the processes must listen beyond loopback to be published.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    ADMIN_PORT=3000 \
    PROXY_PORT=3001 \
    DATA_DIR=/app/data
# Code and dependencies stay owned by root (read-only to the service); only DATA_DIR is writable.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY config ./config
COPY shared ./shared
COPY admin ./admin
COPY proxy ./proxy
RUN mkdir -p /app/data && chown node:node /app/data
# The `node` user (uid 1000) comes with the official image.
USER node
# SQLite file and generated secrets key (when SECRETS_KEY is unset) live here; with PostgreSQL and SECRETS_KEY set
# nothing is written to it.
VOLUME ["/app/data"]
EXPOSE 3000 3001

# Checks the role this container runs: PID 1's arguments (ours, or after docker-init with --init) name it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const a=process.getBuiltinModule('node:fs').readFileSync('/proc/1/cmdline','utf8').split('\\0');const port=a.includes('proxy')?process.env.PROXY_PORT:process.env.ADMIN_PORT;fetch('http://127.0.0.1:'+port+'/healthz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]

ENTRYPOINT ["node", "--import", "tsx", "admin/cli/container.ts"]
CMD ["admin"]
