# Image of the service's processes (docker-compose.yml runs it as `migrate`, `api` and `worker`; the
# Helm chart in deploy/helm as the api and worker Deployments and the migrations Job).
# Two stages: the first compiles the TypeScript and bundles the workflows (`npm run build` → dist/,
# with dist/workflow-bundles/), the second holds only the compiled JavaScript, the workflow bundles
# and the production dependencies: no TypeScript, no tsx, no embedded Postgres, no test tooling, no
# workflow bundler (webpack, SWC). It runs as the official image's unprivileged `node` user, each
# container's process `node dist/…` itself (PID 1 under the orchestrator's init, not npm).

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:24-slim
# MALLOC_ARENA_MAX=2: glibc otherwise gives each of the Temporal core's threads a malloc arena of its
# own (up to 8 per core); two keep the worker's native memory ~90 MiB smaller for the same work
# (bench/scale README "Where the memory goes").
ENV NODE_ENV=production MALLOC_ARENA_MAX=2
WORKDIR /app

# Dependencies first, so a source change does not reinstall them. The `node` npm package that pins
# Node for local runs is a dev dependency and stays out: the image has Node 24. In the same layer,
# deploy/image/prune-node-modules.sh removes what never runs (the Temporal core's native library
# for the other four platforms, Rust sources, type declarations, source maps): 393 MB → 151 MB
# (README "Image"), and deploy/image/drop-workflow-bundler.mjs the workflow bundler (webpack, SWC
# and what only they need): the worker loads the bundle the build stage made. Deleting them in a
# later RUN would not make the image smaller.
COPY package.json package-lock.json deploy/image/prune-node-modules.sh deploy/image/drop-workflow-bundler.mjs ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force \
  && sh prune-node-modules.sh node_modules && rm prune-node-modules.sh drop-workflow-bundler.mjs

# The npm scripts operators use (`npm run admin`, `npm run migrate`) keep their names and run the
# compiled code (from a source checkout they run the TypeScript through tsx); the containers
# themselves run `node dist/…` (docker-compose.yml, the chart's commands). `npm start`, the all-in-one
# development launcher, needs the embedded Postgres and is not in the image.
RUN npm pkg set "scripts.start:api=node dist/api/main.js" "scripts.start:worker=node dist/worker/main.js" \
      "scripts.migrate=node dist/db/migrate-cli.js" "scripts.admin=node dist/cli/admin.js" \
  && npm pkg delete scripts.start

# The project's .npmrc (loglevel=silent), after the install so that its output stays: without it npm
# prints its "> script" banner on stdout before every `npm run`, and its own error lines after a
# failed one, so `npm run admin -- … --json` would not print exactly one JSON document (docs/admin-cli.md).
COPY .npmrc ./

# The code stays owned by root and read-only to the app.
COPY --from=build /app/dist ./dist
USER node

EXPOSE 3000
CMD ["node", "dist/api/main.js"]
