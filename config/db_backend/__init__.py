"""Django's PostgreSQL backend, starting the embedded server on first connection."""
