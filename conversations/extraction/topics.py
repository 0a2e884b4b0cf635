"""What a value is about: "Vue" and "React" are both a frontend framework.

Reconciliation calls two statements contradictory when they say different
things about the same subject. For "I prefer Vue" and "I now prefer React"
the subject is the kind of thing preferred, which the words alone do not
say; this vocabulary of well-known alternatives does. A value outside it is
its own subject, so "prefers tabs" never contradicts "prefers Vue".
"""

from __future__ import annotations

import re
from functools import lru_cache

# topic -> {canonical name: [other spellings]}
TOPICS: dict[str, dict[str, list[str]]] = {
    "frontend framework": {
        "vue": ["vue.js", "vuejs", "vue 3", "vue3"],
        "react": ["react.js", "reactjs"],
        "angular": ["angularjs"],
        "svelte": ["sveltekit"],
        "solid": ["solidjs"],
        "htmx": [],
        "jquery": [],
    },
    "programming language": {
        "python": [],
        "javascript": [],
        "typescript": [],
        "go": ["golang"],
        "rust": [],
        "java": [],
        "kotlin": [],
        "c#": ["csharp"],
        "c++": ["cpp"],
        "ruby": [],
        "php": [],
        "swift": [],
    },
    "web framework": {
        "django": [],
        "flask": [],
        "fastapi": [],
        "rails": ["ruby on rails"],
        "express": ["express.js"],
        "spring": ["spring boot"],
        "laravel": [],
    },
    "database": {
        "postgresql": ["postgres", "pg"],
        "mysql": [],
        "mariadb": [],
        "sqlite": ["sqlite3"],
        "mongodb": ["mongo"],
        "oracle": [],
        "sql server": ["mssql"],
    },
    "editor": {
        "vim": [],
        "neovim": ["nvim"],
        "emacs": [],
        "vs code": ["vscode", "visual studio code"],
        "pycharm": [],
        "intellij": ["intellij idea"],
        "sublime text": ["sublime"],
        "zed": [],
        "cursor": [],
    },
    "notes app": {
        "obsidian": [],
        "notion": [],
        "evernote": ["印象笔记"],
        "onenote": [],
        "logseq": [],
        "bear": [],
    },
    "indentation": {
        "tabs": ["tab"],
        "spaces": ["2 spaces", "4 spaces", "two spaces", "four spaces"],
    },
    "quote style": {"single quotes": [], "double quotes": []},
    "package manager": {
        "npm": [],
        "yarn": [],
        "pnpm": [],
        "bun": [],
        "pip": [],
        "poetry": [],
        "uv": [],
        "conda": [],
    },
    "test framework": {
        "pytest": [],
        "unittest": [],
        "jest": [],
        "vitest": [],
        "mocha": [],
    },
    "build tool": {"webpack": [], "vite": [], "rollup": [], "esbuild": [], "parcel": []},
    "formatter": {"black": [], "prettier": [], "yapf": [], "autopep8": []},
    "coordinate system": {
        "wgs84": ["wgs-84", "wgs 84"],
        "cgcs2000": ["cgcs 2000", "cgcs-2000", "2000国家大地坐标系"],
        "beijing 1954": ["北京54", "北京1954"],
        "xian 1980": ["西安80", "西安1980"],
        "etrs89": [],
        "nad83": [],
    },
    "theme": {
        "dark mode": ["dark theme", "深色模式", "暗色模式", "深色主题"],
        "light mode": ["light theme", "浅色模式", "亮色模式", "浅色主题"],
    },
    "operating system": {
        "linux": [],
        "macos": ["mac os", "os x"],
        "windows": [],
        "ubuntu": [],
        "debian": [],
        "fedora": [],
    },
    "shell": {"bash": [], "zsh": [], "fish": [], "powershell": []},
    "css framework": {"tailwind": ["tailwindcss", "tailwind css"], "bootstrap": [], "bulma": []},
    "cloud": {
        "aws": ["amazon web services"],
        "azure": [],
        "gcp": ["google cloud"],
        "阿里云": ["aliyun", "alibaba cloud"],
        "腾讯云": ["tencent cloud"],
    },
    "reply language": {
        "english": ["英文", "英语"],
        "chinese": ["中文", "汉语", "普通话"],
    },
    "container orchestrator": {"kubernetes": ["k8s"], "docker swarm": [], "nomad": []},
    "ci": {
        "github actions": [],
        "gitlab ci": [],
        "jenkins": [],
        "circleci": [],
    },
}


# Everyday words that name a value only when they are the whole value ("I prefer Go").
_AMBIGUOUS = {
    "go",
    "pg",
    "tab",
    "express",
    "spring",
    "black",
    "swift",
    "bun",
    "fish",
    "solid",
    "parcel",
    "oracle",
    "mocha",
    "jest",
    "zed",
    "rails",
    "windows",
    "uv",
    "pip",
    "java",
    "ruby",
}


@lru_cache(maxsize=1)
def _index() -> tuple[re.Pattern[str], dict[str, tuple[str, str]]]:
    by_spelling: dict[str, tuple[str, str]] = {}
    for topic, names in TOPICS.items():
        for canonical, spellings in names.items():
            for spelling in (canonical, *spellings):
                by_spelling[spelling] = (topic, canonical)
    # Longest first, so "vs code" wins over "code" and "spring boot" over "spring".
    alternatives = sorted(set(by_spelling) - _AMBIGUOUS, key=len, reverse=True)
    pattern = re.compile(
        "|".join(
            re.escape(spelling)
            if not spelling.isascii()
            else rf"(?<![\w.#+]){re.escape(spelling)}(?![\w#+])"
            for spelling in alternatives
        ),
        re.IGNORECASE,
    )
    return pattern, by_spelling


def find_topic(text: str) -> tuple[str, str] | None:
    """(topic, canonical name) of the first well-known value in ``text``, or None."""
    pattern, by_spelling = _index()
    whole = text.strip().lower()
    if whole in by_spelling:
        return by_spelling[whole]
    match = pattern.search(text)
    if match is None:
        return None
    return by_spelling[match.group(0).lower()]
