"""The previous release's code and a database it filled: what an upgrade starts from."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.deploy.app import App
from tests.deploy.server import BASE_DIR

FILL = Path(__file__).resolve().parent / "fill.py"
# The release before this one (commit 4db1d1a on main).
PREVIOUS_RELEASE = "4db1d1a"
# The Django test client used inside the app's processes asks for this host.
CLIENT_HOSTS = "127.0.0.1,localhost,testserver"


def previous_release(folder: Path) -> Path:
    """The previous release's code, extracted from git into ``folder``."""
    known = subprocess.run(
        ["git", "cat-file", "-e", f"{PREVIOUS_RELEASE}^{{commit}}"], cwd=BASE_DIR, timeout=30
    )
    assert known.returncode == 0, f"git history with {PREVIOUS_RELEASE} is needed (a full clone)"
    archive = subprocess.run(
        ["git", "archive", PREVIOUS_RELEASE], cwd=BASE_DIR, capture_output=True, timeout=120
    )
    folder.mkdir()
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def fill(app: App, users: int, memories: int, conversations: int, messages: int) -> dict[str, str]:
    """tests/deploy/fill.py run in ``app``'s code (its API); each user's token secret."""
    out = app.shell(
        f"exec(open({str(FILL)!r}).read()); fill({users}, {memories}, {conversations}, {messages})",
        Q_SYNC="true",
        ALLOWED_HOSTS=CLIENT_HOSTS,
    )
    assert f"code {app.code_dir}\n" in out, "the fill ran another release's code"
    found = [line.split() for line in out.splitlines() if line.startswith("token ")]
    return {email: secret for _kind, email, secret in found}
