# memgrove serve in a container: one image for the primary, its read replicas and a LangGraph app
# that uses the memory through MEMGROVE_URL (compose.yaml runs all four; docs/deploy.md explains).
FROM python:3.11-slim AS base
# git: the primary commits every applied batch and pushes it; replicas clone and follow
RUN apt-get update && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . /src
# [fast]: tantivy, the engine that builds large trees fastest
RUN pip install --no-cache-dir '.[fast]'
RUN git config --system user.name memgrove && git config --system user.email memgrove@localhost
WORKDIR /data
EXPOSE 7437
ENTRYPOINT ["/src/deploy/entrypoint.sh"]
CMD ["primary"]

# the LangGraph app: `langgraph dev` serving this repository's langgraph.json graphs, whose memory
# calls go to MEMGROVE_URL. For production use a LangGraph platform or Aegra image with the same env.
FROM base AS app
RUN pip install --no-cache-dir 'langgraph-cli[inmem]>=0.4'
WORKDIR /src
RUN touch /src/.env
ENTRYPOINT []
CMD ["langgraph", "dev", "--host", "0.0.0.0", "--port", "2024", "--no-browser", "--no-reload"]
