"""django-q2's ``qcluster``, stopping within WORKER_STOP_SECONDS of a SIGTERM or SIGINT.

django-q2's own can hang for good, or for as long as a task takes:

- On SIGTERM its main process sets the cluster's stop event, a multiprocessing Event whose
  ``set`` waits for each process sleeping on it to wake up. When the signal went to the
  whole process group (systemd, ``docker stop`` with an init, ``kill -- -PGID``, process
  managers), the sentinel process that sleeps on the event was killed by it first (it
  keeps SIGTERM's default action), so ``set`` waits for a dead process forever.
- Otherwise the sentinel stops its workers in order, and each finishes its task first: up
  to Q_TIMEOUT (300 s) with a slow LLM.

Here the signal only asks the main loop to stop. The stop event is set from another
thread, and after WORKER_STOP_SECONDS whatever is left of the cluster (the sentinel, its
workers, pusher and monitor) is killed. A task cut short that way is delivered again by
the broker, and an extraction run whose worker was killed is run again within a minute
(see conversations.extraction.runs, "Dead workers").
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from typing import Any

import psutil
from django.conf import settings
from django_q.cluster import Cluster
from django_q.management.commands import qcluster

logger = logging.getLogger(__name__)


class Command(qcluster.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        settings.SECRET_KEY  # noqa: B018  (as django-q2's: signing needs it)
        if options.get("cluster_name"):
            os.environ["Q_CLUSTER_NAME"] = options["cluster_name"]
        cluster = Cluster()
        requested: list[int] = []

        def request_stop(signum: int, frame: Any) -> None:
            # Only noted here: the main loop below stops the cluster.
            requested.append(signum)

        signal.signal(signal.SIGTERM, request_stop)
        signal.signal(signal.SIGINT, request_stop)
        try:
            cluster.start()
        except RuntimeError:
            # The sentinel died while starting: killed by the same signal, or a failure.
            if not requested:
                raise
        if not options.get("run_once"):
            while not requested and cluster.sentinel.is_alive():
                time.sleep(0.2)
        stop(cluster, settings.WORKER_STOP_SECONDS)


def stop(cluster: Cluster, grace: float) -> None:
    """Ask the cluster to stop; kill what is left of it after ``grace`` seconds."""
    sentinel = cluster.sentinel
    if sentinel is None or sentinel.pid is None:
        return
    members = _processes(sentinel.pid)
    if sentinel.is_alive():
        logger.info("Q Cluster %s stopping.", cluster.name)
        # In a thread: set() waits for the sentinel, which may be dead or stuck.
        threading.Thread(target=cluster.stop_event.set, daemon=True).start()
    deadline = time.monotonic() + grace
    while sentinel.is_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
        members |= _processes(sentinel.pid)
    left = [process for process in members if _running(process)]
    for process in left:
        with contextlib.suppress(psutil.Error):  # gone meanwhile
            process.kill()
    psutil.wait_procs(left, timeout=5)
    sentinel.join(timeout=5)
    if left:
        logger.warning(
            "Q Cluster %s stopped: killed %s process(es) still busy after %g s; "
            "their tasks will run again.",
            cluster.name,
            len(left),
            grace,
        )
    else:
        logger.info("Q Cluster %s has stopped.", cluster.name)


def _processes(pid: int) -> set[psutil.Process]:
    """The process ``pid`` and its descendants (those still there)."""
    try:
        process = psutil.Process(pid)
        return {process, *process.children(recursive=True)}
    except psutil.Error:
        return set()


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
