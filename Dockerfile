# The app image: worker, API (and, for local use, the Razorpay sandbox) from one build.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY migrations ./migrations
USER node
# `npm run migrate` once, then `npm run worker` / `npm run api` (see docker-compose.yml).
CMD ["npm", "run", "api"]
