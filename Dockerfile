# syntax=docker/dockerfile:1
# One image for every didyma process: `serve auth|private|public|all`,
# `executor`, `operator`, `migrate`, `admin …` (the Helm chart picks one per
# Deployment). Build: docker build -t didyma .

# ---- build: compile TypeScript, then keep only production dependencies
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-assets.mjs scripts/
COPY api api
COPY cli cli
COPY kernel kernel
COPY features features
COPY infra infra
COPY platform platform
COPY demo demo
COPY executor executor
COPY operator operator
COPY dashboard dashboard
# The compiler's incremental state (dist/.tsbuildinfo) is for rebuilds on a workstation, not for the image.
RUN npm run build && rm -f dist/.tsbuildinfo && npm prune --omit=dev --no-audit --no-fund --loglevel=error

# ---- runtime: no compiler, no dev dependencies, not root
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    DIDYMA_BIND_HOST=0.0.0.0 \
    DIDYMA_DATA_DIR=/tmp/didyma
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY bin bin
COPY crds crds
# A fixed numeric user: Kubernetes' runAsNonRoot can check it without /etc/passwd.
USER 10001:10001
EXPOSE 8080 8081 8082 9464 9465
ENTRYPOINT ["node", "bin/didyma.js"]
CMD ["serve", "all"]
