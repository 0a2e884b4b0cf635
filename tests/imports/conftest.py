from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def imports_dir(settings: Any, tmp_path: Path) -> Path:
    """Each test's uploads in a folder of its own."""
    settings.IMPORTS_DIR = str(tmp_path / "imports")
    return tmp_path / "imports"
