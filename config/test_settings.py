"""Settings for the test suite: the same database server, jobs run inline, fast hashing."""

from __future__ import annotations

import os

from config.settings import *  # noqa: F403
from config.settings import BASE_DIR, Q_CLUSTER

# Playwright's sync API runs an event loop in the test thread; the ORM calls the
# tests make beside it are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

Q_CLUSTER = {**Q_CLUSTER, "sync": True}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
MEMORY_ENABLED_BY_DEFAULT = False
# Tests are deterministic: the hash embeddings unless a test chooses another provider, and
# no model download is ever attempted (tests build their own tiny model2vec model).
MEMORY_EMBEDDING_PROVIDER = "local"
MEMORY_EMBEDDING_MODEL_PATH = ""
MEMORY_EMBEDDING_CACHE_DIR = str(BASE_DIR / "var" / "test-models-absent")
os.environ["HF_HUB_OFFLINE"] = "1"

# Several test runs may share the embedded server at once (one per work tree or engineer):
# each names its own test database.
if test_database := os.environ.get("MEMORYAPP_TEST_DATABASE", "").strip():
    DATABASES["default"]["TEST"] = {"NAME": test_database}  # noqa: F405
