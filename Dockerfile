# The worker-stacks image for deploy/deployment.yaml. Nothing in this repository builds it (no container runtime
# here): build and push it in your pipeline, then `worker-stacks manifests --image <ref>`.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production CDK_DISABLE_VERSION_CHECK=1
COPY --from=build /app/package.json /app/cdk.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/build build
COPY --from=build /app/bin bin
COPY --from=build /app/cloudconfig cloudconfig
# The UID the Deployment runs as (runAsNonRoot); the root filesystem is read-only there, /tmp an emptyDir.
USER 65532:65532
ENTRYPOINT ["node", "bin/worker-stacks.js"]
CMD ["reconcile", "--watch", "--store", "kubernetes", "--all-namespaces", "--port", "8080"]
