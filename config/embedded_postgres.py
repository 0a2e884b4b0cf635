"""Everything the app uses of ``pgserver``, in one place.

pgserver runs a private PostgreSQL with pgvector from a data folder and counts the
processes using it (``.handle_pids.json`` in the folder), stopping it when the last
one exits. Its public API (``get_server``, ``cleanup``, ``get_postmaster_info``) is
not quite enough, so this module also touches three private pieces; they are used
nowhere else, so a pgserver upgrade that changes them breaks only this file:

- ``PostgresServer._lock``, the inter-process lock pgserver holds while it reads or
  writes its list of processes: our edits of that list must hold it too.
- ``PostgresServer.global_process_id_list``, that list: after a restart (to apply a
  new ``shared_buffers``), ``get_server`` hands back the handle it had cached, whose
  constructor does not run again, so this process must re-register by hand.
- ``.handle_pids.json``, the file behind that list: a process killed outright never
  leaves it (and one killed mid-write leaves it empty), which would keep the server
  running forever or break the next start, so dead processes are dropped from it.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PIDS_FILE = ".handle_pids.json"


@dataclass(frozen=True)
class Running:
    """Where a running embedded server listens."""

    host: str
    port: str


def start(pgdata: Path) -> Any:
    """Start the server on ``pgdata`` (or attach to it), registering this process as a user."""
    # platformdirs warns when XDG_RUNTIME_DIR is unset (servers, CI); its /tmp fallback is fine.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    import pgserver

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    forget_dead_processes(pgdata)
    return pgserver.get_server(pgdata, cleanup_mode="stop")


def restart(server: Any) -> Any:
    """Restart ``server`` to apply new settings, when no other process uses it.

    Detaching stops the server when no other process uses it, and get_server starts it
    again. Otherwise it keeps running, get_server hands back this handle, now
    unregistered, and the new settings wait for the server's next start.
    """
    import pgserver
    from pgserver.postgres_server import PostgresServer

    pgdata = server.pgdata
    server.cleanup()
    server = pgserver.get_server(pgdata, cleanup_mode="stop")
    with PostgresServer._lock:
        server.global_process_id_list.get_and_add(os.getpid())
    return server


def address(server: Any) -> Running:
    info = server.get_postmaster_info()
    return Running(host=str(info.socket_dir), port=str(info.port))


def binaries() -> Path:
    """The folder of the PostgreSQL programs pgserver ships (``postgres``, ``initdb``,
    ``pg_ctl``, ``pg_dump``, ``pg_restore``…): version 16, with pgvector."""
    import importlib.util

    spec = importlib.util.find_spec("pgserver")
    assert spec is not None and spec.origin is not None, "pgserver is a dependency"
    return Path(spec.origin).parent / "pginstall" / "bin"


def forget_dead_processes(pgdata: Path) -> None:
    """Drop processes that died without saying so from pgserver's list of the server's users."""
    import psutil
    from pgserver.postgres_server import PostgresServer

    handles = pgdata / PIDS_FILE
    if not handles.exists():
        return
    with PostgresServer._lock:
        try:
            pids = json.loads(handles.read_text())
        except ValueError:
            pids = None
        alive = [pid for pid in pids or [] if isinstance(pid, int) and psutil.pid_exists(pid)]
        if alive != pids:
            handles.write_text(json.dumps(alive))


def registered_processes(pgdata: Path) -> list[int]:
    """The processes pgserver counts as using the server on ``pgdata``."""
    try:
        pids = json.loads((pgdata / PIDS_FILE).read_text())
    except (OSError, ValueError):
        return []
    return [pid for pid in pids if isinstance(pid, int)]


def set_registered_processes(pgdata: Path, pids: list[int]) -> None:
    """Overwrite that list (tests use it to pose as other processes)."""
    from pgserver.postgres_server import PostgresServer

    with PostgresServer._lock:
        (pgdata / PIDS_FILE).write_text(json.dumps(pids))


def stop(pgdata: Path) -> None:
    """Detach this process from the server on ``pgdata``; it stops if no other uses it."""
    import pgserver

    pgserver.get_server(pgdata).cleanup()
