"""Importing a ChatGPT and a Claude export end to end through a real job worker.

For each format a generated export of --conversations conversations and --messages
messages (default 2,000 / 60,000: ChatGPT's as its zip, with branches, system prompts and
tool calls in the trees; Claude's as its conversations.json) is imported for a new user,
as /settings/data does: upload, the worker reads it (the preview), the import starts, the
worker stores the conversations and then builds memories from them, oldest first. A real
``qcluster`` process (--workers processes) does the work; this script polls the import
and the worker's processes. It prints:

- reading: MB/s of the file (parse, normalise, preview);
- stored: messages/s while storing (target: the whole file in under a minute);
- extracted: messages/s while building memories (target: what benchmarks/extraction.py
  shows, end to end through a worker);
- peak memory (RSS) of the worker process that did the import, and of the whole cluster
  (target: under 300 MB).

With --kill-at F the worker is killed (SIGKILL, the whole cluster) once F of the messages
are stored, a new one started and the import handed to it as the check every minute
would: the counts at the end must be exact (nothing stored twice, nothing lost).

The embeddings are the local hash ones unless MEMORY_EMBEDDING_PROVIDER says otherwise
(model2vec alone is ~0.5 GB per process). Runs in a throw-away database (bench_memoryapp).
The machine is shared: timings move with the other work on it.

    python benchmarks/import_history.py [--conversations 2000] [--messages 60000]
        [--formats chatgpt,claude] [--workers 1] [--kill-at 0.5]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import signal
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from _setup import benchmark_database, setup_django
from extraction import ASSISTANT, TALK, TASKS, TASKS_CN, TOOLS, _start_worker

START = datetime(2023, 1, 1, tzinfo=UTC)


def _talk(rng: random.Random, user: bool) -> str:
    values = {
        "tool": rng.choice(TOOLS),
        "other": rng.choice(TOOLS),
        "task": rng.choice(TASKS),
        "task_cn": rng.choice(TASKS_CN),
        "n": rng.randint(1, 999),
    }
    return (rng.choice(TALK) if user else ASSISTANT).format(**values)


def _times(conversations: int) -> Iterator[datetime]:
    """When each conversation starts: spread over two years."""
    for number in range(conversations):
        yield START + timedelta(minutes=number * 2 * 365 * 24 * 60 // max(conversations, 1))


def _chatgpt_conversation(number: int, turns: int, start: datetime, rng: random.Random) -> dict:
    def node(node_id: str, parent: str | None, role: str | None, text: str, at: float) -> dict:
        message = None
        if role is not None:
            message = {
                "id": node_id,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": at,
                "update_time": None,
                "content": {"content_type": "text", "parts": [text]},
                "status": "finished_successfully",
                "end_turn": True,
                "weight": 0.0 if role == "system" else 1.0,
                "metadata": {"is_visually_hidden_from_conversation": role == "system"},
                "recipient": "all",
            }
        return {"id": node_id, "message": message, "parent": parent, "children": []}

    mapping: dict[str, dict] = {}
    epoch = start.timestamp()
    previous = ""
    for index, (role, text) in enumerate(
        [(None, ""), ("system", "You are ChatGPT.")]
        + [("user" if t % 2 == 0 else "assistant", _talk(rng, t % 2 == 0)) for t in range(turns)]
    ):
        node_id = f"n{number}-{index}"
        mapping[node_id] = node(node_id, previous or None, role, text, epoch + index * 30)
        if previous:
            mapping[previous]["children"].append(node_id)
        if role == "assistant" and index == 4 and number % 10 == 0:
            # A regenerated answer: a branch left behind.
            branch = f"n{number}-{index}-old"
            mapping[branch] = node(branch, previous, "assistant", "An older answer.", epoch)
            mapping[previous]["children"].insert(0, branch)
        previous = node_id
    return {
        "title": f"Conversation {number}",
        "create_time": epoch,
        "update_time": epoch + turns * 30,
        "mapping": mapping,
        "current_node": previous,
        "conversation_id": f"bench-{number:06d}",
        "id": f"bench-{number:06d}",
        "is_archived": False,
        "default_model_slug": "gpt-4o",
    }


def _claude_conversation(number: int, turns: int, start: datetime, rng: random.Random) -> dict:
    messages = []
    for turn in range(turns):
        at = (start + timedelta(seconds=30 * turn)).isoformat()
        text = _talk(rng, turn % 2 == 0)
        messages.append(
            {
                "uuid": f"m{number}-{turn}",
                "sender": "human" if turn % 2 == 0 else "assistant",
                "created_at": at,
                "updated_at": at,
                "text": text,
                "content": [{"type": "text", "text": text, "citations": []}],
                "attachments": [],
                "files": [],
            }
        )
    return {
        "uuid": f"bench-{number:06d}",
        "name": f"Conversation {number}",
        "created_at": start.isoformat(),
        "updated_at": (start + timedelta(seconds=30 * turns)).isoformat(),
        "account": {"uuid": "bench"},
        "chat_messages": messages,
    }


def _write_export(out: IO[str], source: str, conversations: int, messages: int) -> None:
    """The export's conversations.json, written one conversation at a time (newest first,
    as ChatGPT lists them)."""
    rng = random.Random(43)
    make = _chatgpt_conversation if source == "chatgpt" else _claude_conversation
    starts = list(_times(conversations))
    out.write("[")
    for index, number in enumerate(reversed(range(conversations))):
        turns = messages // conversations + (1 if number < messages % conversations else 0)
        out.write(("," if index else "") + json.dumps(make(number, turns, starts[number], rng)))
    out.write("]")


def generate(directory: Path, source: str, conversations: int, messages: int) -> Path:
    if source == "chatgpt":
        path = directory / "chatgpt-export.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            with archive.open("conversations.json", "w") as entry:
                text = io.TextIOWrapper(entry, encoding="utf-8")
                _write_export(text, source, conversations, messages)
                text.flush()
                text.detach()
            archive.writestr("chat.html", "<html></html>")
        return path
    path = directory / "conversations.json"
    with path.open("w", encoding="utf-8") as out:
        _write_export(out, source, conversations, messages)
    return path


class Watcher:
    """The worker's processes' memory, sampled whenever ``sample`` is called."""

    def __init__(self, worker: Any):
        import psutil

        self.root = psutil.Process(worker.pid)
        self.peak_process = 0
        self.peak_cluster = 0

    def sample(self) -> None:
        import psutil

        try:
            processes = [self.root, *self.root.children(recursive=True)]
            sizes = [process.memory_info().rss for process in processes]
        except psutil.Error:
            return
        self.peak_process = max(self.peak_process, *sizes)
        self.peak_cluster = max(self.peak_cluster, sum(sizes))


def _ready(worker: Any, timeout: float = 120) -> Any:
    """The worker, once it runs jobs (its start-up is not the import's time)."""
    from django.utils import timezone
    from django_q.tasks import async_task

    from memories.models import WorkerHeartbeat

    asked = timezone.now()
    async_task("memories.jobs.heartbeat")
    started = time.perf_counter()
    while not WorkerHeartbeat.objects.filter(beat_at__gte=asked).exists():
        if worker.poll() is not None or time.perf_counter() - started > timeout:
            raise SystemExit("the worker did not start; see var/bench_imports_worker.log")
        time.sleep(0.2)
    return worker


def _kill(worker: Any) -> None:
    """Kill the whole cluster at once, as a machine losing power would."""
    import psutil

    try:
        processes = [psutil.Process(worker.pid), *psutil.Process(worker.pid).children(True)]
    except psutil.Error:
        return
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)


def _wait(job: Any, done: Any, watcher: Watcher, timeout: float = 1800) -> float:
    """Poll until ``done(job)``; seconds waited."""
    started = time.perf_counter()
    while not done(job):
        if time.perf_counter() - started > timeout:
            raise SystemExit(f"timed out; import {job.pk} is {job.status}/{job.phase}")
        time.sleep(0.2)
        watcher.sample()
        job.refresh_from_db()
        if job.status in ("invalid", "failed"):
            raise SystemExit(f"import {job.pk}: {job.status} {job.error_code} {job.error_details}")
    return time.perf_counter() - started


def bench(source: str, path: Path, workers: int, kill_at: float | None, log: IO[bytes]) -> None:
    from django.core.files.uploadedfile import UploadedFile

    from accounts.models import MemorySettings
    from conversations.models import Conversation, Message
    from imports import services
    from memories.models import Memory
    from tests.conftest import make_user

    user = make_user(f"{source}@example.com")
    MemorySettings.objects.filter(user=user).update(memory_enabled=True)
    size = path.stat().st_size
    worker = _ready(_start_worker(workers, log))
    watcher = Watcher(worker)
    try:
        with path.open("rb") as upload:
            job = services.create_import(
                owner=user, source=source, upload=UploadedFile(upload, name=path.name, size=size)
            )
        reading = _wait(job, lambda j: j.status == "ready", watcher)
        preview = job.preview
        services.start_import(job, keep_conversations=True, build_memories=True)
        job.refresh_from_db()
        if kill_at is not None:
            target = int(kill_at * preview["new_messages"])
            _wait(job, lambda j: j.messages_stored >= target or j.phase != "store", watcher)
            print(f"  killed the worker at {job.messages_stored:,} messages stored")
            _kill(worker)
            worker = _start_worker(workers, log)
            watcher = Watcher(worker)
            # What the check every minute does, without waiting for the minute.
            services.STALL_SECONDS = 0
            time.sleep(1)
            assert services.resume_stalled() == [job.pk], "the import was not taken up again"
        storing = _wait(job, lambda j: j.phase != "store" or j.status == "done", watcher)
        extracting = _wait(job, lambda j: j.status == "done", watcher)
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    stored = Message.objects.filter(conversation__imports=job).count()
    conversations = Conversation.objects.filter(owner=user).count()
    assert (conversations, stored) == (preview["new_conversations"], preview["new_messages"]), (
        f"expected {preview['new_conversations']} conversations / {preview['new_messages']} "
        f"messages, found {conversations} / {stored}"
    )
    print(
        f"{source}: {path.name} {size / 1e6:.1f} MB, {preview['conversations']:,} conversations, "
        f"{preview['messages']:,} messages ({preview['left_out']:,} system/tool left out), "
        f"{workers} worker process(es)"
        + (f", killed and restarted at {kill_at:.0%}" if kill_at is not None else "")
        + "\n"
        f"  read (preview): {reading:.1f} s, {job.bytes_total / 1e6 / reading:.1f} MB/s of "
        f"conversations.json ({job.bytes_total / 1e6:.1f} MB)\n"
        f"  stored: {storing:.1f} s, {stored / storing:,.0f} messages/s (target: all in < 60 s)\n"
        f"  extracted: {extracting:.1f} s, {job.messages_extracted / extracting:,.0f} messages/s"
        f" (memories: {Memory.objects.filter(owner=user).count():,} of which "
        f"{job.memories_superseded:,} superseded older ones)\n"
        f"  end to end (upload to done): {reading + storing + extracting:.1f} s\n"
        f"  worker peak RSS: {watcher.peak_process / 2**20:.0f} MB the busiest process, "
        f"{watcher.peak_cluster / 2**20:.0f} MB the whole cluster (target < 300 MB)"
        + (" (after the restart)" if kill_at is not None else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=60_000)
    parser.add_argument("--formats", default="chatgpt,claude")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--kill-at", type=float, default=None)
    options = parser.parse_args()
    os.environ.setdefault("MEMORY_EMBEDDING_PROVIDER", "local")
    setup_django()
    from django.conf import settings
    from django_q.conf import Conf

    Conf.SYNC = False  # Jobs go to the database broker, for the worker.
    log_path = Path(settings.BASE_DIR) / "var" / "bench_imports_worker.log"
    with (
        tempfile.TemporaryDirectory() as directory,
        benchmark_database(),
        log_path.open("wb") as log,
    ):
        settings.IMPORTS_DIR = os.environ["IMPORTS_DIR"] = str(Path(directory) / "imports")
        for source in options.formats.split(","):
            started = time.perf_counter()
            path = generate(Path(directory), source, options.conversations, options.messages)
            print(f"(generated {path.name} in {time.perf_counter() - started:.1f} s)")
            bench(source, path, options.workers, options.kill_at, log)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
