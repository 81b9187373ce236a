"""Settings of the control plane, read from the environment.

``FLOWSITE_ENV`` chooses the profile: ``development`` (the default: debug on, local servers,
fixed development keys) or ``production`` (debug off, every secret required, HTTPS-only
cookies, HSTS; ``manage.py check --deploy`` is clean). Every variable read here is listed in
``ENVIRONMENT_VARIABLES`` with its meaning; ``docs/configuration.md`` documents them.

``FLOWSITE_ROLE`` (``node`` for ``manage.py runnode`` unless set) says which secrets a process
holds: a node reads neither ``SECRET_KEY`` nor ``DATABASE_URL`` and has no database at all.
Each secret may instead be read from a file named by ``<NAME>_FILE``.
"""

from __future__ import annotations

import os
import secrets
import sys
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from engine.secrets import key_strength_problem
from engine.spark.settings import master_kind

BASE_DIR = Path(__file__).resolve().parent.parent

#: Every environment variable the settings read, with what it sets.
ENVIRONMENT_VARIABLES = {
    "FLOWSITE_ENV": "development (default) or production",
    "FLOWSITE_ROLE": "web (default) or node (default of manage.py runnode): a node reads no SECRET_KEY, no database",
    "SECRET_KEY": "Django's signing key (required in production; not read by nodes)",
    "FLOWSITE_SENSITIVE_KEY": "master key of sensitive values, ≥ 32 random bytes, hex or base64 (production: required)",
    "FLOWSITE_PREVIOUS_SENSITIVE_KEY": "the former master key during a rotation: values sealed under it still open",
    "FLOWSITE_CLUSTER_KEY": "the key that authenticates commands to nodes, ≥ 32 random bytes (required in production)",
    "DEBUG": "true or false (default: true in development, false in production)",
    "ALLOWED_HOSTS": "comma-separated host names the web tier answers",
    "CSRF_TRUSTED_ORIGINS": "comma-separated origins (with scheme) trusted for unsafe requests",
    "DATABASE_URL": "PostgreSQL URL, e.g. postgres://user:password@host:5432/flowsite (not read by nodes)",
    "REDIS_URL": "Redis URL for coordination, the Channels layer and the Celery broker",
    "FLOWSITE_CLUSTER": "name of the cluster of nodes the control plane talks to (default: default)",
    "FLOWSITE_CLUSTER_PKI_DIR": "directory of the cluster's CA on the operator's machine (manage.py cluster_pki; "
                                "default .local/pki)",
    "FLOWSITE_NODE_CERT_FILE": "this node's certificate (PEM, issued by manage.py cluster_pki issue)",
    "FLOWSITE_NODE_KEY_FILE": "this node's private key (PEM, mode 0600)",
    "FLOWSITE_CLUSTER_CA_FILE": "the cluster CA's certificate (ca.pem) that nodes verify each other with",
    "FLOWSITE_CLUSTER_CRL_FILE": "the cluster CA's revocation list (crl.pem), read again whenever it changes",
    "CELERY_BROKER_URL": "overrides the Celery broker (default: REDIS_URL, database 1)",
    "SPARK_MASTER": "Spark master of the nodes' Spark-backed processors: local[*] (default), spark://host:port or "
                    "sc://host:port",
    "FLOWSITE_SPARK_STAGING_DIR": "where nodes stage large batches as Parquet for Spark; the Spark workers must see it "
                                  "at the same path (default: <node data dir>/spark-staging)",
    "FLOWSITE_ANALYTICS_DIR": "the analytics directory shared by the nodes, the jobs process and Spark, at the same "
                              "path everywhere: nodes export provenance there as Parquet (default .local/analytics)",
    "SECURE_SSL_REDIRECT": "redirect plain HTTP to HTTPS in production (default true)",
    "SECURE_PROXY_SSL_HEADER": "set to true behind a TLS-terminating proxy that sends X-Forwarded-Proto",
    "FLOWSITE_MAX_REQUEST_BYTES": "largest request body accepted, in bytes (default 16 MiB)",
    "LOG_LEVEL": "level of the project's log (default INFO)",
    "FLOWSITE_PLATFORM_ADDRESSES": "comma-separated host:port of the platform's services (web tier, PostgreSQL, "
                                   "node ports) that nodes refuse to every flow (the node adds its Redis itself)",
    "FLOWSITE_PLATFORM_DIRS": "comma-separated directories of the platform no tenant may be granted as a file root",
    "FLOWSITE_LOGIN_FAILURE_LIMIT": "failed logins (portal password or API token) from one address, for one user "
                                    "name, before a lockout (default 5)",
    "FLOWSITE_LOGIN_COOLOFF_MINUTES": "how long a lockout lasts, in minutes (default 15)",
    "FLOWSITE_TOKEN_CREATE_RATE": "API tokens one user may create, e.g. 20/hour (the default)",
    "FLOWSITE_REQUEST_RESULT_SECONDS": "how long a provenance query, lineage, queue listing, drop or export "
                                       "request and its result are kept, in seconds (default 1800, NiFi's 30 min)",
    "FLOWSITE_REQUESTS_PER_USER": "request resources one user may keep at once before a submission is refused "
                                  "(default 20)",
    "FLOWSITE_NODE_REQUEST_TIMEOUT": "how long a request to the nodes waits for each node's answer, in seconds "
                                     "(default 10)",
    "FLOWSITE_PROVENANCE_EXPORT_MAX_EVENTS": "the most events one provenance export holds (default 100000)",
    "FLOWSITE_LINEAGE_MAX_NODES": "the most nodes (FlowFiles and events) one lineage graph holds (default 5000)",
    "FLOWSITE_CONTENT_MAX_BYTES": "the largest content served whole (larger needs a Range), in bytes (default 1 GiB)",
}
#: The variables that may instead be read from a file, named by ``<NAME>_FILE``.
SECRET_VARIABLES = ("SECRET_KEY", "FLOWSITE_SENSITIVE_KEY", "FLOWSITE_PREVIOUS_SENSITIVE_KEY", "FLOWSITE_CLUSTER_KEY",
                    "DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")
ENVIRONMENT_VARIABLES.update({f"{name}_FILE": f"a file holding {name} (instead of the variable itself)"
                              for name in SECRET_VARIABLES})


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    if name in SECRET_VARIABLES:
        value = _from_file(name, value)
    return default if value is None or value == "" else value


def _from_file(name: str, value: str | None) -> str | None:
    """``value``, or the contents of the file ``<name>_FILE`` names (without its final newline);
    setting both is refused, as is a file that cannot be read or is empty."""
    path = os.environ.get(f"{name}_FILE") or None
    if path is None:
        return value
    if value:
        raise ImproperlyConfigured(f"both {name} and {name}_FILE are set: set only one of them")
    try:
        with open(path, encoding="utf-8") as file:
            contents = file.read().rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise ImproperlyConfigured(f"{name}_FILE={path!r} cannot be read: {reason}") from None
    if not contents.strip():
        raise ImproperlyConfigured(f"{name}_FILE={path!r} is empty")
    return contents


def _env_bool(name: str, default: bool) -> bool:
    value = _env(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use true or false)")


def _env_list(name: str, default: list[str]) -> list[str]:
    value = _env(name)
    return default if value is None else [item.strip() for item in value.split(",") if item.strip()]


def _env_positive(name: str, default: str, kind: type = int) -> int | float:
    """A positive number (``kind``) from ``name``, else ``default``."""
    value = _env(name, default)
    try:
        number = kind(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise ImproperlyConfigured(f"{name}={value!r} is not a positive {'whole ' if kind is int else ''}number")
    return number


def _redis_database(url: str, database: int) -> str:
    """``url`` naming database ``database``, its query (``rediss://`` TLS options) kept."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{database}"))


FLOWSITE_ENV = _env("FLOWSITE_ENV", "development")
if FLOWSITE_ENV not in ("development", "production"):
    raise ImproperlyConfigured(f"FLOWSITE_ENV={FLOWSITE_ENV!r}: use development or production")
PRODUCTION = FLOWSITE_ENV == "production"
DEBUG = _env_bool("DEBUG", not PRODUCTION)
FLOWSITE_ROLE = _env("FLOWSITE_ROLE", "node" if sys.argv[1:2] == ["runnode"] else "web")
if FLOWSITE_ROLE not in ("web", "node"):
    raise ImproperlyConfigured(f"FLOWSITE_ROLE={FLOWSITE_ROLE!r}: use web or node")
NODE = FLOWSITE_ROLE == "node"
#: With debug off, keys must be long and random (``engine.secrets.key_strength_problem``).
REQUIRE_STRONG_KEYS = not DEBUG


def _secret(name: str, development_default: str, *, strong: bool = False) -> str:
    value = _env(name)
    if value is None:
        if PRODUCTION:
            raise ImproperlyConfigured(f"{name} must be set when FLOWSITE_ENV=production")
        return development_default
    if strong and REQUIRE_STRONG_KEYS and (problem := key_strength_problem(value, name)):
        raise ImproperlyConfigured(problem)
    return value


#: Django signs sessions and CSRF tokens with it; a node serves neither and gets a throwaway key.
SECRET_KEY = (secrets.token_urlsafe(50) if NODE
              else _secret("SECRET_KEY", "development-only-secret-key-never-use-it-in-production-0123456789"))
FLOWSITE_SENSITIVE_KEY = _secret("FLOWSITE_SENSITIVE_KEY", "development-only-sensitive-properties-key", strong=True)
FLOWSITE_PREVIOUS_SENSITIVE_KEY = _env("FLOWSITE_PREVIOUS_SENSITIVE_KEY", "")
#: Authenticates commands to nodes (``engine.cluster.signing``); development falls back to a fixed
#: key, and nodes then warn loudly.
FLOWSITE_CLUSTER_KEY = _secret("FLOWSITE_CLUSTER_KEY", "", strong=True)
ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = _env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "guardian",
    "axes",
    "channels",
    "flowsite.tenancy",
    "flowsite.flows",
    "flowsite.api",
    "flowsite.portal",
    "flowsite.cluster",
    "flowsite.provenance",
    "flowsite.live",
    "workers",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "flowsite.limits.RequestSizeLimitMiddleware",
    "flowsite.static_files.StaticFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "flowsite.urls"
ASGI_APPLICATION = "flowsite.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "flowsite.portal.context.tenant",
            ],
        },
    },
]

if NODE:
    DATABASES = {}  # a node touches no database: any query fails at once
else:
    DATABASES = {
        "default": dj_database_url.parse(
            _env("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/flowsite"),
            conn_max_age=0),
    }
    # Under ASGI (daphne) Django runs each sync view in a worker thread; a persistent connection
    # (CONN_MAX_AGE > 0) is kept per thread and closed only when a request ends in that same thread,
    # so connections pile up and go stale. Each request opens and closes its own (CONN_MAX_AGE=0);
    # put PgBouncer in front of PostgreSQL when connection set-up cost matters.
    if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_URL must name a PostgreSQL database (postgres://...)")

REDIS_URL = _env("REDIS_URL", "redis://127.0.0.1:6379/0")
#: The cluster whose nodes this control plane deploys to (the prefix of its Redis keys).
FLOWSITE_CLUSTER = _env("FLOWSITE_CLUSTER", "default")
if any(ch in FLOWSITE_CLUSTER for ch in ": \t\n"):
    raise ImproperlyConfigured(f"FLOWSITE_CLUSTER={FLOWSITE_CLUSTER!r}: a cluster name has no ':' and no spaces")

# Node identity (engine.cluster.identity): the operator's CA directory, and a node's certificate,
# key, and copies of the CA certificate and revocation list. Paths, not secrets: the key file
# itself is the secret (mode 0600).
FLOWSITE_CLUSTER_PKI_DIR = Path(_env("FLOWSITE_CLUSTER_PKI_DIR", str(BASE_DIR / ".local" / "pki")))
FLOWSITE_NODE_CERT_FILE = _env("FLOWSITE_NODE_CERT_FILE", "")
FLOWSITE_NODE_KEY_FILE = _env("FLOWSITE_NODE_KEY_FILE", "")
FLOWSITE_CLUSTER_CA_FILE = _env("FLOWSITE_CLUSTER_CA_FILE", "")
FLOWSITE_CLUSTER_CRL_FILE = _env("FLOWSITE_CLUSTER_CRL_FILE", "")
if bool(FLOWSITE_NODE_CERT_FILE) != bool(FLOWSITE_NODE_KEY_FILE):
    raise ImproperlyConfigured("set both FLOWSITE_NODE_CERT_FILE and FLOWSITE_NODE_KEY_FILE, or neither")

# Django's cache (DRF's throttle counts) lives in Redis, shared by every web process.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                "KEY_PREFIX": "flowsite:cache"},
}

# A consumer waits for its messages with BZPOPMIN blocking 5 s (channels_redis); redis-py's
# default read timeout is 5 s too, so an idle socket's wait would end in a TimeoutError (1011):
# the read timeout is set above the blocking time.
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 15}], "prefix": "flowsite:channels:",
                   "group_expiry": 3600},
    },
}

#: How often each web process sends its WebSocket subscribers what changed in the nodes' figures
#: (``flowsite.live.relay``), in seconds.
LIVE_INTERVAL_SECONDS = 1.0

CELERY_BROKER_URL = _env("CELERY_BROKER_URL", _redis_database(REDIS_URL, 1))
CELERY_RESULT_BACKEND = CELERY_BROKER_URL
CELERY_RESULT_EXPIRES = 3600
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Two queues, served by workers of their own (scripts/up, compose.yaml): quick request resources
# (provenance queries, lineage, exports, queue listings and drops) on ``provenance``, Spark
# analytics — minutes of one core — on ``analytics``, so a quick request never waits behind one.
CELERY_TASK_DEFAULT_QUEUE = "provenance"
CELERY_TASK_ROUTES = {"provenance.run_analytics": {"queue": "analytics"}}

SPARK_MASTER = _env("SPARK_MASTER", "local[*]")
try:
    master_kind(SPARK_MASTER)
except ValueError as error:
    raise ImproperlyConfigured(f"SPARK_MASTER: {error}") from None
SPARK_STAGING_DIR = _env("FLOWSITE_SPARK_STAGING_DIR", "")
if SPARK_STAGING_DIR and not os.path.isabs(SPARK_STAGING_DIR):
    raise ImproperlyConfigured(f"FLOWSITE_SPARK_STAGING_DIR={SPARK_STAGING_DIR!r} is not an absolute path")

# Provenance analytics (docs/analytics.md): nodes export provenance as Parquet under
# <FLOWSITE_ANALYTICS_DIR>/provenance/<node>/, where the jobs process (and a Spark cluster's
# workers) read it: a directory every one of them sees at the same path (compose: a shared volume).
FLOWSITE_ANALYTICS_DIR = Path(_env("FLOWSITE_ANALYTICS_DIR", str(BASE_DIR / ".local" / "analytics")))
#: How long an analytics request and its result are kept, in seconds.
FLOWSITE_ANALYTICS_RESULT_SECONDS = 3600
#: The most rows a result keeps (the rest are counted as cut off).
FLOWSITE_ANALYTICS_MAX_ROWS = 1000
#: How long the nodes may take to export, and the Spark query to run, in seconds.
FLOWSITE_ANALYTICS_EXPORT_TIMEOUT = 300.0
FLOWSITE_ANALYTICS_QUERY_TIMEOUT = 600.0
# Request resources (docs/provenance.md): kept in the cluster's Redis this long after they are
# made and again after they finish; each job waits this long for each node's answer.
FLOWSITE_REQUEST_RESULT_SECONDS = _env_positive("FLOWSITE_REQUEST_RESULT_SECONDS", "1800")
FLOWSITE_REQUESTS_PER_USER = _env_positive("FLOWSITE_REQUESTS_PER_USER", "20")
FLOWSITE_NODE_REQUEST_TIMEOUT = _env_positive("FLOWSITE_NODE_REQUEST_TIMEOUT", "10", float)
FLOWSITE_PROVENANCE_EXPORT_MAX_EVENTS = _env_positive("FLOWSITE_PROVENANCE_EXPORT_MAX_EVENTS", "100000")
# NiFi stops a lineage at 1,000 events; 5,000 nodes draw a FlowFile split into 1,000 pieces whole.
FLOWSITE_LINEAGE_MAX_NODES = _env_positive("FLOWSITE_LINEAGE_MAX_NODES", "5000")
FLOWSITE_CONTENT_MAX_BYTES = _env_positive("FLOWSITE_CONTENT_MAX_BYTES", str(1 << 30))
#: The jobs process's Spark besides its master (SPARK_MASTER): engine.spark.settings.SparkSettings
#: fields, e.g. {"driver_memory": "2g", "conf": {"spark.executor.memory": "2g"}}.
FLOWSITE_ANALYTICS_SPARK: dict[str, object] = {"ui_enabled": False}

AUTHENTICATION_BACKENDS = [
    "flowsite.lockout.LockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
    "guardian.backends.ObjectPermissionBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "portal:login"
LOGIN_REDIRECT_URL = "portal:home"
LOGOUT_REDIRECT_URL = "portal:login"
GUARDIAN_RAISE_403 = False

# Lockout after repeated failed logins (django-axes, attempts kept in the database so every web
# process sees them): portal passwords and API tokens, per user name and client address (an API
# token failure counts under the user name "(api token)"). A lockout is a 429 that says how long.
AXES_FAILURE_LIMIT = int(_env("FLOWSITE_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=float(_env("FLOWSITE_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "flowsite.lockout.lockout_response"
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = False

# Content-Security-Policy (django-csp) on every response: scripts only from this site (the portal
# has no inline script; the API's Swagger page loads its set-up script from the same URL), styles
# from this site plus inline style attributes (the browsable API and Redoc use them), no
# framing, no plugins. Redoc renders in a blob: worker.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "worker-src": ["'self'", "blob:"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    },
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "flowsite.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated",
                                   "flowsite.api.permissions.TokenScope"],
    "DEFAULT_PARSER_CLASSES": ["flowsite.api.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer", "flowsite.api.renderers.BrowsableAPIRenderer"],
    "DEFAULT_METADATA_CLASS": "flowsite.api.metadata.Metadata",
    "DEFAULT_PAGINATION_CLASS": "flowsite.api.pagination.Pagination",
    "PAGE_SIZE": 100,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "flowsite.api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "flowsite.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "DEFAULT_THROTTLE_RATES": {"tokens": _env("FLOWSITE_TOKEN_CREATE_RATE", "20/hour"), "analytics": "120/hour"},
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Flowsite API",
    "DESCRIPTION": "Tenants, process groups, processors, connections, funnels, flow versions and API tokens.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["flowsite.api.permissions.DocsAccess"],
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {"RequestStateEnum": ["queued", "running", "done", "failed"],
                            "AnalyticsStateEnum": ["queued", "exporting", "querying", "done", "failed"]},
}

MAX_REQUEST_BYTES = int(_env("FLOWSITE_MAX_REQUEST_BYTES", str(16 * 1024 * 1024)))
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BYTES

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / ".local" / "static"
#: The portal's own files, and the browser library the canvas loads (installed by npm from
#: package-lock.json: scripts/up, scripts/test and the Dockerfile run ``npm ci``).
STATICFILES_DIRS = [BASE_DIR / "static", ("vendor/cytoscape", BASE_DIR / "node_modules" / "cytoscape" / "dist")]
#: Directories of the platform an operator may not grant a tenant (besides BASE_DIR and STATIC_ROOT).
FLOWSITE_PLATFORM_DIRS = [item.strip() for item in (_env("FLOWSITE_PLATFORM_DIRS") or "").split(",") if item.strip()]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage" if PRODUCTION
                    else "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the portal's scripts read it to send X-CSRFToken
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = 31_536_000
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    if _env_bool("SECURE_PROXY_SSL_HEADER", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": _env("LOG_LEVEL", "INFO")},
    "loggers": {"axes": {"level": "WARNING"}},  # a line per failed login at INFO is noise
}
