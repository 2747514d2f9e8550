# One image for every role; the command picks the role (see docker-compose.yml).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY prisma ./prisma
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
COPY packages ./packages
RUN npm run build

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
# The V8 heap budget `npm start` and `npm run start:<role>` give every process (see README,
# Memory): left to itself V8 lets garbage pile up to several times the live heap under a burst.
ENV NODE_OPTIONS=--max-old-space-size=192
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# The migrations are applied by every process at start.
COPY prisma/migrations ./prisma/migrations
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
CMD ["node", "dist/apps/kairos/src/main.js"]
