"""A PostgreSQL server run the way a team's own (or a managed) one is, for the deploy tests.

Its own data folder in a temporary directory; TLS on 127.0.0.1 at a free port, with a
certificate signed by a certificate authority made for the run (``ca.pem``, for
``sslmode=verify-full``); password (SCRAM) authentication for every role; a superuser
``admin`` that runs the admin step of docs/DEPLOY.md, and the app's role ``memoryapp``,
no superuser, owning its database and nothing else.

The programs are the PostgreSQL 16 that pgserver ships with pgvector (the machine's own
PostgreSQL has no pgvector). That build has no OpenSSL, so TLS is answered by
tests/deploy/tls_front.py in front of the server's Unix socket, as ``ssl = on`` with a
``hostssl`` line would be; the server itself listens on no TCP port.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import psycopg
from psycopg import sql

from config.embedded_postgres import binaries

ADMIN = "admin"
APP_ROLE = "memoryapp"
APP_DATABASE = "memoryapp"
# PostgreSQL refuses to run as root: as pgserver does, it runs as this system user then.
SYSTEM_USER = "pgserver"
BASE_DIR = Path(__file__).resolve().parent.parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_certificates(folder: Path) -> None:
    """ca.pem / ca.key, and server.pem / server.key for 127.0.0.1 and localhost, signed by it."""
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
        "/CN=memoryapp test CA", "-keyout", "ca.key", "-out", "ca.pem", cwd=folder,
    )  # fmt: skip
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
        "-keyout", "server.key", "-out", "server.csr", cwd=folder,
    )  # fmt: skip
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "server.pem", cwd=folder,
    )  # fmt: skip


class ExternalPostgres:
    """Start with ``start()``, stop with ``stop()`` (which also removes its folder)."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="memoryapp-external-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root / "socket"
        self.port = free_port()  # Names the socket file; no TCP listener of the server's.
        self.tls_port = free_port()
        self.admin_password = secrets.token_urlsafe(16)
        self.app_password = secrets.token_urlsafe(16)
        self.front: subprocess.Popen[bytes] | None = None
        self.run_as: dict[str, Any] = {}

    # Lifecycle ------------------------------------------------------------------------

    def start(self) -> ExternalPostgres:
        self.root.chmod(0o755)
        self.socket_dir.mkdir()
        if os.geteuid() == 0:
            self.run_as = {"user": _system_user()}
            shutil.chown(self.socket_dir, self.run_as["user"])
            shutil.chown(self.root, self.run_as["user"])
        password_file = self.root / "admin-password"
        password_file.write_text(self.admin_password + "\n")
        if self.run_as:
            shutil.chown(password_file, self.run_as["user"])
        self._program(
            "initdb", "-D", str(self.data), "-U", ADMIN, "--auth=scram-sha-256",
            f"--pwfile={password_file}", "--encoding=UTF8", "--locale=C.UTF-8",
        )  # fmt: skip
        password_file.unlink()
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                "listen_addresses = ''\n"
                f"unix_socket_directories = '{self.socket_dir}'\n"
                f"port = {self.port}\n"
                "max_connections = 200\n"
                "shared_buffers = 128MB\n"
                # A throwaway test server: durability is not what is tested.
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
            )
        (self.data / "pg_hba.conf").write_text("local all all scram-sha-256\n")
        self._program(
            "pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w", "start"
        )
        make_certificates(self.root)
        self._start_front()
        self.admin_step()
        return self

    def stop(self) -> None:
        if self.front is not None:
            self.front.terminate()
            self.front.wait(timeout=10)
            self.front = None
        if (self.data / "postmaster.pid").exists():
            self._program("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def _program(self, name: str, *args: str) -> None:
        subprocess.run(
            [str(binaries() / name), *args],
            check=True,
            capture_output=True,
            timeout=120,
            cwd=self.root,
            **self.run_as,
        )

    def _start_front(self) -> None:
        socket_file = self.socket_dir / f".s.PGSQL.{self.port}"
        log = (self.root / "tls-front.log").open("wb")
        self.front = subprocess.Popen(
            [sys.executable, "-m", "tests.deploy.tls_front", str(self.tls_port),
             str(socket_file), str(self.root / "server.pem"), str(self.root / "server.key")],
            cwd=BASE_DIR,
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while b"listening" not in (self.root / "tls-front.log").read_bytes():
            assert self.front.poll() is None, (self.root / "tls-front.log").read_text()
            assert time.monotonic() < deadline, "the TLS front did not start"
            time.sleep(0.05)

    def front_connections(self) -> dict[str, int]:
        """How many connections the TLS front took, by kind (``tls`` or ``refused``)."""
        lines = (self.root / "tls-front.log").read_text().split()
        return {kind: lines.count(kind) for kind in ("tls", "refused")}

    # The admin step (docs/DEPLOY.md, "The database") ------------------------------------

    def admin_step(self) -> None:
        self.admin_sql(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(APP_ROLE), sql.Literal(self.app_password)
            )
        )
        self.create_database(APP_DATABASE)

    def create_database(self, name: str) -> None:
        """An empty database owned by the app's role, with pgvector, as the admin makes it."""
        self.admin_sql(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(name), sql.Identifier(APP_ROLE)
            )
        )
        self.admin_sql(sql.SQL("CREATE EXTENSION vector"), dbname=name)

    def admin_sql(self, statement: sql.SQL | sql.Composed, *, dbname: str = "postgres") -> None:
        with self.connect(dbname, user=ADMIN) as conn:
            conn.autocommit = True
            conn.execute(statement)

    # Addresses ---------------------------------------------------------------------------

    def url(self, dbname: str = APP_DATABASE, **params: str) -> str:
        """The app's DATABASE_URL over TLS (``sslmode=require`` unless ``params`` say)."""
        query = urlencode({"sslmode": "require", **params})
        return (
            f"postgres://{APP_ROLE}:{quote(self.app_password, safe='')}"
            f"@127.0.0.1:{self.tls_port}/{dbname}?{query}"
        )

    def socket_url(self, dbname: str = APP_DATABASE, **params: str) -> str:
        """The app's DATABASE_URL through the server's socket folder (``?host=/folder``)."""
        query = urlencode({"host": str(self.socket_dir), "port": str(self.port), **params})
        return f"postgres://{APP_ROLE}:{quote(self.app_password, safe='')}@/{dbname}?{query}"

    def connect(self, dbname: str = APP_DATABASE, *, user: str = APP_ROLE) -> psycopg.Connection:
        password = self.admin_password if user == ADMIN else self.app_password
        return psycopg.connect(
            host=str(self.socket_dir), port=self.port, user=user, password=password,
            dbname=dbname,
        )  # fmt: skip

    def environment(self) -> dict[str, str]:
        """libpq's variables for the admin, for the server's own programs (pg_dump…)."""
        return {
            "PGHOST": str(self.socket_dir),
            "PGPORT": str(self.port),
            "PGUSER": ADMIN,
            "PGPASSWORD": self.admin_password,
        }


def _system_user() -> str:
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(["useradd", "-s", "/bin/false", SYSTEM_USER], check=True, timeout=30)
    return SYSTEM_USER
