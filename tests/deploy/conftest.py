"""The deploy tests' separate PostgreSQL server, started once for them and stopped after."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.deploy.server import ExternalPostgres


@pytest.fixture(scope="session")
def external_postgres() -> Iterator[ExternalPostgres]:
    server = ExternalPostgres().start()
    try:
        yield server
    finally:
        server.stop()
