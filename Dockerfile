# One image for every Flowsite process: web (daphne, the default command), jobs (celery), nodes
# (manage.py runnode) and the Spark master and worker (pyspark's spark-class). compose.yaml sets the
# command of each service.
# The portal's browser library (package-lock.json), installed apart so the image holds no Node.js.
FROM node:20-bookworm-slim AS browser-libraries
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Java 17 runs Spark's JVM under PySpark; procps gives Spark's launch scripts `ps`. The slim image
# has no man directories, which the JRE's alternatives links expect.
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt .
# twofish (pyjks's, for Java keystores) is published only as source: a C compiler builds it, then goes.
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && pip install -r requirements.txt \
    && apt-get purge -y --auto-remove gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*

COPY . .
COPY --from=browser-libraries /app/node_modules ./node_modules
# The keys only let the production settings load; collectstatic signs nothing.
RUN FLOWSITE_ENV=production SECRET_KEY=build-time-only FLOWSITE_SENSITIVE_KEY=build-time-only \
    python manage.py collectstatic --noinput

# Nodes keep their repositories in /data (a volume per node), stage Parquet for Spark in
# /spark-staging (a volume shared with the Spark worker) and export provenance for analytics into
# /analytics (shared with the jobs process and the Spark worker); the image's files stay root's.
RUN groupadd --system --gid 10001 flowsite \
    && useradd --system --uid 10001 --gid flowsite --create-home --shell /usr/sbin/nologin flowsite \
    && mkdir /data /spark-staging /analytics && chown flowsite:flowsite /data /spark-staging /analytics
USER flowsite

EXPOSE 8000
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "flowsite.asgi:application"]
