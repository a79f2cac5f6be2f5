# The app image: the worker, the API, the migrations and (for the sandbox mode) our Razorpay
# sandbox, from one build; docker-compose.yml picks the role with `command`. TypeScript runs through
# tsx, which is a runtime dependency, so there is no build step.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY tsconfig.json ./
COPY src ./src
COPY migrations ./migrations
# The code stays owned by root (read-only to the app); the processes run unprivileged.
USER node
# No HEALTHCHECK here: the image plays four roles (a one-shot migration, the worker on
# WORKER_HEALTH_PORT, the API on API_PORT, the sandbox), so each compose service declares its own.
EXPOSE 3000 3001
# `npm run migrate` once, then `npm run worker` / `npm run api` (see docker-compose.yml).
CMD ["npm", "run", "api"]
