# Image of the service's processes (docker-compose.yml runs it as `migrate`, `api` and `worker`).
# The app runs its TypeScript through tsx (a runtime dependency): there is no build step.
FROM node:24-slim

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first, so a source change does not reinstall them. Dev dependencies (the test
# tooling, and the `node` npm package that pins Node for local runs) stay out: the image has Node 24.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# The source stays owned by root and read-only to the app; it runs as the image's unprivileged
# `node` user.
COPY . .
USER node

EXPOSE 3000
CMD ["npm", "run", "start:api"]
