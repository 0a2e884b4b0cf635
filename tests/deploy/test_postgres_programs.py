"""backup_database and restore_database pick a pg_dump / pg_restore the server accepts, and
say what to install when there is none."""

from __future__ import annotations

import shutil

import pytest
from django.core.management.base import CommandError

from config import postgres_programs
from config.embedded_postgres import binaries


@pytest.fixture
def no_programs_on_the_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)


def test_without_tls_the_programs_installed_with_the_app_do(
    monkeypatch: pytest.MonkeyPatch, no_programs_on_the_path: None
) -> None:
    monkeypatch.setattr(postgres_programs, "server_major_version", lambda: 16)
    assert postgres_programs.program("pg_dump", tls=False) == binaries() / "pg_dump"


def test_tls_needs_the_paths_programs_and_says_which(
    monkeypatch: pytest.MonkeyPatch, no_programs_on_the_path: None
) -> None:
    monkeypatch.setattr(postgres_programs, "server_major_version", lambda: 16)
    with pytest.raises(CommandError, match=r"pg_dump 16 or newer with TLS.*postgresql-client-16"):
        postgres_programs.program("pg_dump", tls=True)


def test_a_newer_server_than_the_programs_is_refused_in_one_sentence(
    monkeypatch: pytest.MonkeyPatch, no_programs_on_the_path: None
) -> None:
    monkeypatch.setattr(postgres_programs, "server_major_version", lambda: 17)
    with pytest.raises(CommandError, match=r"pg_restore 17 or newer .*\(version 16\)"):
        postgres_programs.program("pg_restore", tls=False)
