"""Settings for memoryapp: everything that varies comes from the environment.

The README lists every variable with its default.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.utils.translation import gettext_lazy as _

from config.database import database_settings
from config.env import envbool, envfloat, envint, envlist, envstr

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = envbool("DEBUG", False)
# The default key is public: production must set SECRET_KEY (`manage.py check --deploy` says so).
SECRET_KEY = envstr("SECRET_KEY", "django-insecure-dev-only-set-SECRET_KEY-in-production")
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])
SITE_URL = envstr("SITE_URL", "http://127.0.0.1:8000")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    # First: its project-wide commands (serve, migrate, seed_demo, qcluster) win over the
    # apps' (its qcluster over django-q2's).
    "config",
    "django_q",
    # Listed so the API docs page uses ninja's bundled Swagger UI files instead of a CDN.
    "ninja",
    "allauth",
    "allauth.account",
    # The account page lists the signed-in sessions (and signs others out) with it.
    "allauth.usersessions",
    "accounts",
    "teams",
    "memories",
    "conversations",
    "recall",
    "imports",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "api.middleware.ApiBodySizeLimitMiddleware",
    "api.middleware.ApiJsonErrorsMiddleware",
    "api.middleware.ApiRequestChecksMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # The language saved on a signed-in person's account wins over the cookie.
    "accounts.middleware.UserLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "allauth.usersessions.middleware.UserSessionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

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
                "django.template.context_processors.i18n",
                "accounts.context_processors.ui",
            ],
        },
    },
]

DATABASES = {"default": database_settings(os.environ, BASE_DIR)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# django-allauth: accounts are identified by email.
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = "username"
ACCOUNT_EMAIL_VERIFICATION = envstr("ACCOUNT_EMAIL_VERIFICATION", "optional")
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_LOGOUT_ON_GET = False
# Confirming an invited address leads back to the invitation (accepting one needs it).
ACCOUNT_ADAPTER = "teams.adapter.AccountAdapter"
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[memoryapp] "
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "/"
ACCOUNT_LOGOUT_REDIRECT_URL = "/"

EMAIL_BACKEND = envstr("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = envstr("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", 587)
EMAIL_HOST_USER = envstr("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = envstr("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", True)
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "memoryapp <noreply@localhost>")

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("简体中文"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
# The language menu's choice for visitors lasts a year (the account keeps a signed-in person's).
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = envstr("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "config.storage.StaticStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = envbool("WHITENOISE_USE_FINDERS", True)
WHITENOISE_MANIFEST_STRICT = False

SESSION_COOKIE_SECURE = envbool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# HTTPS in production (docs/DEPLOY.md): plain HTTP is redirected, except the load balancer's
# health check, and browsers are told to use HTTPS only (HSTS) for this many seconds.
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", False)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", False)

# django-q2: the ORM broker keeps jobs in the same PostgreSQL; REDIS_URL moves them to Redis.
Q_CLUSTER = {
    "name": "memoryapp",
    "workers": envint("Q_WORKERS", 2),
    "timeout": envint("Q_TIMEOUT", 300),
    "retry": envint("Q_RETRY", 360),
    "max_attempts": envint("Q_MAX_ATTEMPTS", 5),
    "catch_up": False,
    "sync": envbool("Q_SYNC", False),
    "orm": "default",
}
# How long a stopping worker may finish its tasks before it is killed (manage.py qcluster).
WORKER_STOP_SECONDS = envfloat("WORKER_STOP_SECONDS", 8.0)
REDIS_URL = envstr("REDIS_URL", "")
if REDIS_URL:
    Q_CLUSTER.pop("orm")
    Q_CLUSTER["redis"] = REDIS_URL

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"refusals_in_one_line": {"()": "config.log_filters.RefusalsInOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    "loggers": {
        "pgserver": {"level": "WARNING"},
        # httpx2 (under the openai SDK) logs every request it sends at INFO.
        "httpx2": {"level": "WARNING"},
        "django.request": {"filters": ["refusals_in_one_line"]},
    },
}

# Memory behaviour.
MEMORY_ENABLED_BY_DEFAULT = envbool("MEMORY_ENABLED_BY_DEFAULT", False)
MEMORY_REVIEW_BY_DEFAULT = envbool("MEMORY_REVIEW_BY_DEFAULT", False)
# auto: the local model2vec model when it loads, else the local hash embeddings. Also local,
# model2vec, onnx (search/onnx_embeddings.py), openai, sentence-transformers.
MEMORY_EMBEDDING_PROVIDER = envstr("MEMORY_EMBEDDING_PROVIDER", "auto")
MEMORY_EMBEDDING_DIMENSIONS = envint("MEMORY_EMBEDDING_DIMENSIONS", 384)
API_MAX_BODY_BYTES = envint("API_MAX_BODY_BYTES", 1_000_000)
# Imports of ChatGPT and Claude exports (imports/): the largest file accepted (upload, and
# conversations.json inflated from a zip), and where uploads wait for the job worker (the
# web server and the worker must share it).
IMPORT_MAX_BYTES = envint("IMPORT_MAX_BYTES", 1024 * 1024 * 1024)
IMPORTS_DIR = envstr("IMPORTS_DIR", str(BASE_DIR / "var" / "imports"))
WORKER_HEARTBEAT_MAX_AGE_SECONDS = envint("WORKER_HEARTBEAT_MAX_AGE_SECONDS", 180)
MEMORY_DEFAULT_CONFIDENCE = envfloat("MEMORY_DEFAULT_CONFIDENCE", 0.8)

# Extraction: when it runs, what it reads, which extractor, how failures retry.
MEMORY_EXTRACTOR = envstr("MEMORY_EXTRACTOR", "rules")
EXTRACTION_EVERY_USER_TURNS = envint("EXTRACTION_EVERY_USER_TURNS", 5)
EXTRACTION_WINDOW_MESSAGES = envint("EXTRACTION_WINDOW_MESSAGES", 50)
EXTRACTION_WINDOW_TOKENS = envint("EXTRACTION_WINDOW_TOKENS", 4000)
EXTRACTION_MAX_ATTEMPTS = envint("EXTRACTION_MAX_ATTEMPTS", 4)
EXTRACTION_RETRY_SECONDS = envint("EXTRACTION_RETRY_SECONDS", 30)
# A run marked running this long ago whose worker no longer holds its conversation died.
EXTRACTION_RUN_GRACE_SECONDS = envint("EXTRACTION_RUN_GRACE_SECONDS", 10)
EXTRACTION_LLM_URL = envstr("EXTRACTION_LLM_URL", "")
EXTRACTION_LLM_MODEL = envstr("EXTRACTION_LLM_MODEL", "gpt-4o-mini")
EXTRACTION_LLM_API_KEY = envstr("EXTRACTION_LLM_API_KEY", "")
EXTRACTION_LLM_TIMEOUT = envfloat("EXTRACTION_LLM_TIMEOUT", 60.0)
MEMORY_DUPLICATE_JACCARD = envfloat("MEMORY_DUPLICATE_JACCARD", 0.7)
MEMORY_DUPLICATE_COSINE = envfloat("MEMORY_DUPLICATE_COSINE", 0.92)

# Forgetting: relevance = exp(-rate * days unused) * (1 + ln(1 + uses)) * importance.
MEMORY_FORGET_DECAY_RATE = envfloat("MEMORY_FORGET_DECAY_RATE", 0.01)
MEMORY_FORGET_BELOW = envfloat("MEMORY_FORGET_BELOW", 0.1)
MEMORY_FADE_BELOW = envfloat("MEMORY_FADE_BELOW", 0.3)
MEMORY_FADE_IMPORTANCE_FACTOR = envfloat("MEMORY_FADE_IMPORTANCE_FACTOR", 0.9)
MEMORY_CONTEXT_FADE_DAYS = envint("MEMORY_CONTEXT_FADE_DAYS", 7)
MEMORY_UNUSED_DAYS = envint("MEMORY_UNUSED_DAYS", 30)
MEMORY_UNUSED_CONFIDENCE_FACTOR = envfloat("MEMORY_UNUSED_CONFIDENCE_FACTOR", 0.9)
MEMORY_CONFIDENCE_FLOOR = envfloat("MEMORY_CONFIDENCE_FLOOR", 0.1)
MEMORY_FORGET_HOUR_UTC = envint("MEMORY_FORGET_HOUR_UTC", 3)
# Deleting for good: memories in the trash this long are purged, and messages kept this long
# (0: forever; a temporary conversation's for 24 hours at most), by the daily jobs.
MEMORY_TRASH_DAYS = envint("MEMORY_TRASH_DAYS", 30)
MEMORY_MESSAGE_RETENTION_DAYS = envint("MEMORY_MESSAGE_RETENTION_DAYS", 90)
# Embeddings and search (see search/embeddings.py and search/).
MEMORY_EMBEDDING_BASE_URL = envstr("MEMORY_EMBEDDING_BASE_URL", "https://api.openai.com/v1")
MEMORY_EMBEDDING_API_KEY = envstr("MEMORY_EMBEDDING_API_KEY", "")
MEMORY_EMBEDDING_MODEL = envstr("MEMORY_EMBEDDING_MODEL", "")
MEMORY_EMBEDDING_TIMEOUT = envfloat("MEMORY_EMBEDDING_TIMEOUT", 10.0)
MEMORY_EMBEDDING_BATCH_SIZE = envint("MEMORY_EMBEDDING_BATCH_SIZE", 64)
MEMORY_EMBEDDING_MAX_RETRIES = envint("MEMORY_EMBEDDING_MAX_RETRIES", 3)
# model2vec (and auto), onnx: a local model directory (never downloaded); model2vec's cache
# directory is where the model named by MEMORY_EMBEDDING_MODEL is downloaded once.
MEMORY_EMBEDDING_MODEL_PATH = envstr("MEMORY_EMBEDDING_MODEL_PATH", "")
MEMORY_EMBEDDING_CACHE_DIR = envstr("MEMORY_EMBEDDING_CACHE_DIR", str(BASE_DIR / "var" / "models"))
# After migrate, a change of embedding model re-embeds this many memories or fewer at once.
MEMORY_EMBEDDING_AUTO_REBUILD_MAX = envint("MEMORY_EMBEDDING_AUTO_REBUILD_MAX", 2000)
MEMORY_RECALL_MIN_SIMILARITY = envfloat("MEMORY_RECALL_MIN_SIMILARITY", 0.2)
# Extra database connections per process (memories/side_connections.py): the injection
# preview searches past turns on one beside its memory search, and its bookkeeping is
# written on one after it answers. 0: everything on the request's connection, in turn.
MEMORY_SIDE_CONNECTIONS = envint("MEMORY_SIDE_CONNECTIONS", 4)
# The memory list's search box also lists memories at least this similar in meaning.
MEMORY_SEARCH_MIN_SIMILARITY = envfloat("MEMORY_SEARCH_MIN_SIMILARITY", 0.3)
# Requests per token (or signed-in browser) to the JSON API; empty turns the limit off.
API_RATE_LIMIT = envstr("API_RATE_LIMIT", "600/min")

# The OpenAI-compatible memory proxy (/v1/chat/completions, api/proxy.py): the model server
# it forwards chats to, its key, client model names it renames ("gpt-4o=llama3,…"), and
# how long it waits for the upstream (per read: a streamed answer may take longer in all).
MEMORY_PROXY_UPSTREAM_URL = envstr("MEMORY_PROXY_UPSTREAM_URL", "")
MEMORY_PROXY_UPSTREAM_API_KEY = envstr("MEMORY_PROXY_UPSTREAM_API_KEY", "")
MEMORY_PROXY_MODEL_MAP = envstr("MEMORY_PROXY_MODEL_MAP", "")
MEMORY_PROXY_TIMEOUT = envfloat("MEMORY_PROXY_TIMEOUT", 120.0)
# A chat request's body, images included; a larger one is answered 413 and not forwarded.
MEMORY_PROXY_MAX_BODY_BYTES = envint("MEMORY_PROXY_MAX_BODY_BYTES", 10_000_000)
