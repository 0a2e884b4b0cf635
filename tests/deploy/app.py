"""memoryapp's own processes, as production runs them, against one DATABASE_URL.

Web processes are ``uvicorn config.asgi:application`` (the connection pool on), workers
``manage.py qcluster``, one-off steps ``manage.py …``, all with the production settings
(DEBUG off, a SECRET_KEY, no test settings). Each long-lived process starts in a session
of its own, as under a service manager, so a signal reaches it alone; whatever is still
running when the test ends is killed. Logs go to test-artifacts/deploy-<name>.log.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from tests.conftest import ARTIFACTS
from tests.deploy.server import BASE_DIR, free_port

STARTS_WITHIN = 90.0
PASSWORD = "correct-horse-battery"
# What the test process sets for itself and the app's processes must not inherit.
NOT_INHERITED = ("DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE", "MEMORYAPP_")


@dataclass
class Web:
    process: subprocess.Popen[bytes]
    url: str

    def client(self, token: str = "") -> httpx2.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx2.Client(base_url=self.url, headers=headers, timeout=30)


@dataclass
class App:
    database_url: str
    name: str = "app"
    extra_env: dict[str, str] = field(default_factory=dict)
    # The code that runs: this tree, or another release's (the upgrade test).
    code_dir: Path = BASE_DIR
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(50))

    def env(self, **overrides: str) -> dict[str, str]:
        inherited = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(NOT_INHERITED) and not name.startswith("PYTEST")
        }
        return {
            **inherited,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": self.database_url,
            "SECRET_KEY": self.secret_key,
            "DEBUG": "false",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "MEMORY_EMBEDDING_PROVIDER": "local",
            "HF_HUB_OFFLINE": "1",
            "API_RATE_LIMIT": "",
            "LOG_LEVEL": "WARNING",
            "Q_WORKERS": "1",
            "WORKER_STOP_SECONDS": "5",
            **self.extra_env,
            **overrides,
        }

    def log(self, process_name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        return ARTIFACTS / f"deploy-{self.name}-{process_name}.log"

    # One-off steps -------------------------------------------------------------------

    def manage(self, *args: str, timeout: float = 300, **env: Any) -> str:
        result = self.run_manage(*args, timeout=timeout, **env)
        assert result.returncode == 0, f"manage.py {' '.join(args)}:\n{result.stderr}"
        return result.stdout

    def run_manage(
        self, *args: str, timeout: float = 300, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=self.code_dir,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def shell(self, code: str, **env: str) -> str:
        """Run Python with Django set up (``manage.py shell -c``); its output."""
        return self.manage("shell", "-c", code, timeout=300, **env)

    def make_users(self, *emails: str) -> dict[str, str]:
        """Users with memory on, each with a full-scope token: each email's token secret."""
        out = self.shell(
            "from django.contrib.auth import get_user_model\n"
            "from accounts.models import ApiToken, MemorySettings\n"
            f"for email in {list(emails)!r}:\n"
            "    user = get_user_model().objects.create_user(username=email.split('@')[0],"
            f" email=email, password={PASSWORD!r})\n"
            "    MemorySettings.objects.filter(user=user).update(memory_enabled=True)\n"
            "    token, secret = ApiToken.issue(user=user, name='chat')\n"
            "    print('token', email, secret)\n"
        )
        found = [line.split() for line in out.splitlines() if line.startswith("token ")]
        return {email: secret for _kind, email, secret in found}

    # Long-lived processes ------------------------------------------------------------

    def start(self, process_name: str, *command: str, **env: str) -> subprocess.Popen[bytes]:
        with self.log(process_name).open("wb") as out:
            process = subprocess.Popen(
                command,
                cwd=self.code_dir,
                env=self.env(**env),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.started.append(process)
        return process

    def web(self, process_name: str = "web", **env: str) -> Web:
        """A uvicorn process, answering once /healthz does (200, or 503 before a worker)."""
        port = free_port()
        process = self.start(
            process_name,
            sys.executable, "-m", "uvicorn", "config.asgi:application",
            "--host", "127.0.0.1", "--port", str(port), "--timeout-graceful-shutdown", "20",
            **env,
        )  # fmt: skip
        web = Web(process, f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + STARTS_WITHIN
        while True:
            assert process.poll() is None, self.log(process_name).read_text()
            try:
                if httpx2.get(f"{web.url}/healthz", timeout=5).status_code in (200, 503):
                    return web
            except httpx2.TransportError:
                pass
            assert time.monotonic() < deadline, f"{process_name} did not start"
            time.sleep(0.25)

    def worker(self, process_name: str = "worker", **env: str) -> subprocess.Popen[bytes]:
        return self.start(process_name, sys.executable, "manage.py", "qcluster", **env)

    def stop_all(self) -> None:
        for process in self.started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        self.started.clear()


@contextmanager
def running(app: App) -> Iterator[App]:
    try:
        yield app
    finally:
        app.stop_all()


@contextmanager
def signed_in(web: Web, email: str) -> Iterator[httpx2.Client]:
    """A browser-like session on ``web``: signed in through the log-in form."""
    with httpx2.Client(base_url=web.url, timeout=30, follow_redirects=True) as client:
        page = client.get("/accounts/login/")
        response = client.post(
            "/accounts/login/",
            data={"login": email, "password": PASSWORD, "csrfmiddlewaretoken": csrf(page.text)},
        )
        assert response.status_code == 200 and "sessionid" in client.cookies, response.text[:500]
        yield client


def csrf(html: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert match, "no CSRF token on the page"
    return match[1]


def post_form(client: httpx2.Client, path: str, data: dict[str, Any]) -> httpx2.Response:
    """POST a form as the page does: with the CSRF token of the session's cookie."""
    token = client.cookies.get("csrftoken") or csrf(client.get("/settings/memories").text)
    return client.post(path, data={**data, "csrfmiddlewaretoken": token})
