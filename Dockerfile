# syntax=docker/dockerfile:1
# One image definition for both services; the build argument APP picks which.
# Build from the repository root (the context is the monorepo):
#   docker build --build-arg APP=payment -t platform/payment .
#   docker build --build-arg APP=gateway -t platform/gateway .
# The runtime image holds production dependencies and built output only. It also
# runs the one-shot migration job, with the project's own runner (nothing is
# downloaded; the service applies pending migrations itself at start as well,
# under the same advisory lock):
#   docker run --rm -e DATABASE_URL=... platform/payment node ../../packages/db/dist/migrate-deploy.js
ARG NODE_IMAGE=node:24-bookworm-slim
# payment | gateway
ARG APP

FROM ${NODE_IMAGE} AS base
ARG APP
RUN case "$APP" in payment|gateway) ;; *) echo "build with --build-arg APP=payment|gateway" >&2; exit 1;; esac
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false \
    TURBO_TELEMETRY_DISABLED=1 CHECKPOINT_DISABLE=1
WORKDIR /repo

# `turbo prune --docker`: the app and the workspaces it uses, with a lockfile cut
# down to them. json/ (manifests) feeds the install layer, which stays cached
# until a dependency of this app changes; full/ holds their sources. prod/ is the
# same closure narrowed to runtime dependencies (infra/docker/workspace-deploy.js).
FROM base AS prune
ARG APP
COPY . .
RUN --mount=type=cache,target=/root/.npm \
    npm install --no-save --no-package-lock --ignore-scripts --prefix /tmp/turbo \
      "turbo@$(node -p 'require("./package.json").devDependencies.turbo')" \
 && /tmp/turbo/node_modules/.bin/turbo prune "@platform/${APP}" --docker --out-dir /out \
 && cp tsconfig.base.json /out/full/ \
 && cd /out/json \
 && node /repo/infra/docker/workspace-deploy.js prod-manifests "@platform/${APP}" /out/prod

# Install (TypeScript, turbo, the Prisma CLI) for this app only, then build it and
# the workspaces it imports; `prisma generate` runs first and needs no engine download.
FROM base AS build
ARG APP
COPY --from=prune /out/json/ ./
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts
COPY --from=prune /out/full/ ./
COPY infra/docker/workspace-deploy.js /tmp/workspace-deploy.js
RUN npx turbo run build --filter="@platform/${APP}..." \
 && node /tmp/workspace-deploy.js bundle "@platform/${APP}" /out/bundle

# Production dependencies of the app and its workspace packages, versions from the lockfile.
FROM base AS prod-deps
COPY --from=prune /out/prod/ ./
RUN --mount=type=cache,target=/root/.npm npm install --omit=dev --ignore-scripts

FROM base AS runtime-common
ARG APP
ENV NODE_ENV=production HOST=0.0.0.0
WORKDIR /app
COPY --from=prod-deps /repo/ ./
COPY --from=build /out/bundle/ ./
WORKDIR /app/apps/${APP}
USER node
# Slim images have no curl; Node's fetch does the probe.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/health`,{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# PID 1 is Node itself (no tini): with WORKERS > 1 it is the cluster primary, which
# handles SIGTERM/SIGINT (forwarded to the workers, which drain) and reaps its
# workers; no other process is started, so there is nothing else to reap.
# --max-semi-space-size=8: V8's young generation grows to 64 MB per process by default;
# capped at 2 x 8 MB it took the gateway's peak RSS from 1,000 to 708 MB (primary + 2
# workers) in bench `peers` at the same CPU per request (docs/performance.md).
# No --enable-source-maps: Node then keeps every loaded module's map and line table,
# ~0.9 MB per idle worker (issue 46), and maps each Error.stack it formats. dist/ is
# tsc output file for file, names kept; for .ts positions in stack traces, run with
# NODE_OPTIONS=--enable-source-maps (the .map files are in the image).
# Workers inherit these flags. The gateway's stage below adds one of its own.
CMD ["node", "--max-semi-space-size=8", "dist/main.js"]

# Each service's port (the proxy and the Kubernetes manifests use the same numbers).
FROM runtime-common AS runtime-payment
ENV PORT=3001
EXPOSE 3001

FROM runtime-common AS runtime-gateway
ENV PORT=3002
# glibc's malloc at most 2 arenas per process instead of 8 per core: the threads
# V8 and libuv start (compilers, GC helpers, the thread pool) each kept memory in an
# arena of their own. Per gateway worker -1.8 MB idle, -3.4 MB after chats, at
# the same CPU per request in paired bench rounds (docs/performance.md, issue 46).
# bench/src/peers/services.ts reads the ENV lines of this stage.
ENV MALLOC_ARENA_MAX=2
# --liftoff-only: WebAssembly stays on V8's baseline compiler. The only wasm a gateway
# worker runs is undici's HTTP parser (llhttp); when its 29 KB state machine gets hot,
# V8 recompiles it with TurboFan on a helper thread: 140-240 ms of CPU and a 20.5 MB
# compiler zone, under load (a burst of streams), most of which glibc then keeps.
# With the flag, at the same CPU per chat and stream request: after chats 91 MB per
# worker against 100 (the tree's PSS 138 against 154); the 2,000-stream peak moved by
# less than its own spread (docs/performance.md, "Session 26"). The console's Prisma
# query compiler (wasm too) stays on this tier as well, at the same CPU per query; the
# payment service (Prisma on every route) keeps the CMD above.
# bench/src/peers/services.ts reads the flags from this line.
CMD ["node", "--max-semi-space-size=8", "--liftoff-only", "dist/main.js"]
EXPOSE 3002

# Default target.
FROM runtime-${APP} AS runtime
