# One image for every role of payroute:
#   docker build -t payroute .
#   docker run payroute migrate                      apply pending migrations, then exit (`migrate status`, `migrate down --yes`)
#   docker run payroute admin                        admin process (Koa) on ADMIN_PORT (3000)
#   docker run payroute proxy                        proxy process (the public front door) on PROXY_PORT (3001)
#   docker run payroute cli users create --email E   operator CLI (one JSON object on stdout; `cli --help`)
# docker-compose.yml runs PostgreSQL, the migrations, the admin process and several proxies from it.
#
# Two stages. `build` installs every dependency (the compiler among them) and compiles config/ shared/ admin/ proxy/
# into dist/ (`npm run build`, tsconfig.build.json). `runtime` installs the production dependencies from the
# lockfile and takes dist/ from `build`: it runs plain JavaScript, with no compiler, no tsx and no test package.
#
# `--omit=optional` beside `--omit=dev`: a devDependency that a production package names as an OPTIONAL peer is
# "devOptional" to npm (viem, abitype and ox name typescript; viem names mppx, whose own optional peers bring
# express, hono and @x402/*; ws names bufferutil and utf-8-validate), and npm omits such a package only when both
# kinds are omitted. The production tree's only other optional package is pg-cloudflare, which pg loads on
# Cloudflare Workers only. test/operations/build-image.test.ts runs these steps and checks what the runtime tree holds.
#
# `--ignore-scripts`: no install script runs, so no compiler is needed and nothing is fetched from GitHub. Without
# it npm runs `node-gyp rebuild` for better-sqlite3 (a package with a binding.gyp, whose `"gypfile": false` the
# lockfile does not keep), which fails with no Python, make or C++ compiler; yet better-sqlite3 loads the N-API
# builds it carries (linux x64 and arm64, glibc and musl) and never the one node-gyp would make. secp256k1's script
# looks for the build it carries (linux-x64) and would compile one elsewhere; loaded, the package looks again and
# falls back to its pure-JS implementation (slower signatures). The build stage needs no script either: tsc only.
# npm is pinned: the lockfile's meaning (which packages --omit drops) is npm's, so every build resolves it alike.

FROM node:22.23.3-slim AS build
WORKDIR /app
RUN npm install -g npm@11.19.1 --no-audit --no-fund
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY config ./config
COPY shared ./shared
COPY admin ./admin
COPY proxy ./proxy
RUN npm run build

FROM node:22.23.3-slim AS runtime
WORKDIR /app
# HOST=0.0.0.0: inside a container the processes must listen beyond loopback to be published.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    ADMIN_PORT=3000 \
    PROXY_PORT=3001 \
    DATA_DIR=/app/data
RUN npm install -g npm@11.19.1 --no-audit --no-fund
# Code and dependencies stay owned by root (read-only to the service); only DATA_DIR is writable.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
RUN mkdir -p /app/data && chown node:node /app/data
# The `node` user (uid 1000) comes with the official image.
USER node
# SQLite file and generated secrets key (when SECRETS_KEY is unset) live here; with PostgreSQL and SECRETS_KEY set
# nothing is written to it.
VOLUME ["/app/data"]
EXPOSE 3000 3001

# Asks the role this container runs whether it takes traffic: /readyz answers 200 once ready and 503 while it
# starts or drains. PID 1's arguments (ours, or after docker-init with --init) name the role, hence the port.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const a=process.getBuiltinModule('node:fs').readFileSync('/proc/1/cmdline','utf8').split('\\0');const port=a.includes('proxy')?process.env.PROXY_PORT:process.env.ADMIN_PORT;fetch('http://127.0.0.1:'+port+'/readyz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]

ENTRYPOINT ["node", "dist/admin/cli/container.js"]
CMD ["admin"]
