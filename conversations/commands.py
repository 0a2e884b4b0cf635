# Chinese replies use Chinese (full-width) punctuation on purpose.
"""Slash commands a chat application forwards: /remember, /remember-project, /forget,
/forget --all, /memories, /memory search. Parsed here, answered in the user's
language (English or Chinese), in a sentence or two a chat can show as is.

With memory off every command answers that memory is off and how to turn it
on, and changes nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.postgres.search import SearchQuery
from django.db import transaction
from django.db.models import Count

from accounts.models import MemorySettings
from conversations.models import Conversation
from core.cjk import is_cjk
from memories import services
from memories.gate import NeverRemember
from memories.models import Memory, MemoryEvent, MemoryQuerySet, Scope, one_line
from memories.permissions import batch_undoable_by
from memories.search import chat_pool, search_memories
from memories.sensitive import SensitiveContent
from search.textsearch import SEARCH_CONFIG, tsquery
from teams.models import Project
from teams.permissions import can_write_project

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# How many memories one /forget <words> may trash, and how many a reply lists.
FORGET_LIMIT = 50
LISTED = 5

COMMANDS = (
    "/remember",
    "/remember-project",
    "/forget",
    "/forget --all",
    "/memories",
    "/memory search",
)

MESSAGES = {
    "en": {
        "off": "Memory is off, so nothing was changed. Turn it on in Memory settings: {url}",
        "remembered": "Remembered: “{content}”.",
        "remembered_project": "Remembered for project {project}: “{content}”.",
        "known": "You already have this: “{content}”. {url}",
        "need_text": "Tell me what to remember, e.g. /remember I prefer tabs over spaces.",
        "sensitive": (
            "I won't remember that: it is only a secret ({kinds}). Keep passwords and keys "
            "in a password manager."
        ),
        "never_remember": (
            "I won't remember that: it falls under “{rule}”, which your memory settings say "
            "never to remember."
        ),
        "need_project": "/remember-project needs a project: send its id or slug as “project”.",
        "viewer": "You can read project {project}'s memories but not add to them.",
        "need_words": "Tell me what to forget, e.g. /forget tabs — or /forget --all.",
        "forgot_none": "No memory matches “{words}”; nothing was forgotten.",
        "forgot": (
            "Forgot 1 memory:\n{items}\nYou can undo this.",
            "Forgot {count} memories:\n{items}\nYou can undo this.",
        ),
        "forgot_all": (
            "Forgot your only personal memory. You can undo this.",
            "Forgot all {count} of your personal memories. You can undo this.",
        ),
        "forgot_all_none": "You have no personal memories to forget.",
        "summary": (
            "1 memory in effect ({breakdown}).",
            "{count} memories in effect ({breakdown}).",
        ),
        "summary_top": "Most important:\n{items}",
        "summary_none": "No memories are in effect yet. Add one with /remember.",
        "found": (
            "1 memory matches “{query}”:\n{items}",
            "{count} memories match “{query}”:\n{items}",
        ),
        "found_none": "No memory matches “{query}”.",
        "need_query": "Tell me what to look for, e.g. /memory search deadlines.",
        "unknown": "Unknown command. Try: {commands}.",
        "undone": ("Brought back 1 memory.", "Brought back {count} memories."),
        "nothing_to_undo": "There is nothing left to undo.",
        "scopes": {"user": "personal", "project": "project", "conversation": "this conversation"},
    },
    "zh": {
        "off": "记忆功能未开启，未做任何更改。请在“记忆设置”中开启：{url}",
        "remembered": "已记住：“{content}”。",
        "remembered_project": "已为项目 {project} 记住：“{content}”。",
        "known": "你已经有这条记忆了：“{content}”。{url}",
        "need_text": "请告诉我要记住什么，例如：/remember 我喜欢用 vitest。",
        "sensitive": "这条内容只是一个机密信息（{kinds}），我不会记住它。请把密码和密钥保存在密码管理器中。",
        "never_remember": "我不会记住这条内容：它属于你在记忆设置中列为“不要记住”的“{rule}”。",
        "need_project": "/remember-project 需要指定项目：请在 “project” 中发送项目的 id 或 slug。",
        "viewer": "你可以查看项目 {project} 的记忆，但不能添加。",
        "need_words": "请告诉我要忘记什么，例如：/forget vitest，或 /forget --all。",
        "forgot_none": "没有与“{words}”匹配的记忆，未删除任何内容。",
        "forgot": "已忘记 {count} 条记忆：\n{items}\n可以撤销。",
        "forgot_all": "已忘记你的全部 {count} 条个人记忆，可以撤销。",
        "forgot_all_none": "你没有可以忘记的个人记忆。",
        "summary": "当前生效的记忆共 {count} 条（{breakdown}）。",
        "summary_top": "最重要的：\n{items}",
        "summary_none": "目前没有生效的记忆。可以用 /remember 添加。",
        "found": "有 {count} 条记忆与“{query}”匹配：\n{items}",
        "found_none": "没有与“{query}”匹配的记忆。",
        "need_query": "请告诉我要找什么，例如：/memory search 截止日期。",
        "unknown": "未知命令。可用命令：{commands}。",
        "undone": "已恢复 {count} 条记忆。",
        "nothing_to_undo": "没有可以撤销的内容了。",
        "scopes": {"user": "个人", "project": "项目", "conversation": "本对话"},
    },
}


def say(language: str, key: str, **values: object) -> str:
    """The reply ``key`` in ``language``; of a (one, many) pair, the one that fits ``count``."""
    message = MESSAGES[language][key]
    if isinstance(message, tuple):
        message = message[0] if values.get("count") == 1 else message[1]
    return str(message).format(**values)


class CommandError(Exception):
    """A command that cannot run as sent; ``code`` is the API error code."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class CommandReply:
    command: str
    reply: str
    language: str
    changed: bool = False
    memories: list[Memory] = field(default_factory=list)
    undo_token: uuid.UUID | None = None


def detect_language(text: str, accept_language: str = "", explicit: str | None = None) -> str:
    """ "zh" or "en": as asked, else Chinese text means Chinese, else the browser's first choice."""
    if explicit in MESSAGES:
        return str(explicit)
    if any(is_cjk(char) for char in text):
        return "zh"
    first = accept_language.split(",")[0].strip().lower()
    return "zh" if first.startswith("zh") else "en"


def _items(memories: list[Memory]) -> str:
    return "\n".join(f"- {one_line(memory.content)[:120]}" for memory in memories[:LISTED])


@dataclass
class CommandContext:
    user: User
    language: str
    project: Project | None = None
    conversation: Conversation | None = None
    actor_label: str = ""
    # The address the user reached this server at (links in replies); else SITE_URL.
    site_url: str = ""

    def link(self, path: str) -> str:
        return f"{self.site_url or settings.SITE_URL}{path}"

    def say(self, key: str, **values: object) -> str:
        return say(self.language, key, **values)


def run_command(
    user: User,
    text: str,
    *,
    language: str | None = None,
    accept_language: str = "",
    project: Project | None = None,
    conversation: Conversation | None = None,
    actor_label: str = "",
    site_url: str = "",
) -> CommandReply:
    """Run one slash command for ``user`` and say what happened; its links start with
    ``site_url`` (the server as the caller reached it) or else ``SITE_URL``."""
    text = text.strip()
    context = CommandContext(
        user=user,
        language=detect_language(text, accept_language, language),
        project=project,
        conversation=conversation,
        actor_label=actor_label,
        site_url=site_url,
    )
    name, argument = _parse(text)
    if name is None:
        raise CommandError("VALIDATION_ERROR", context.say("unknown", commands=", ".join(COMMANDS)))
    if not MemorySettings.for_user(user).memory_enabled:
        return CommandReply(
            name,
            context.say("off", url=context.link("/settings/memories#memory-settings")),
            context.language,
        )
    try:
        reply = HANDLERS[name](context, argument)
    except SensitiveContent as refusal:
        kinds = ", ".join(refusal.kinds)
        raise CommandError("SENSITIVE_CONTENT", context.say("sensitive", kinds=kinds)) from None
    except NeverRemember as refusal:
        message = context.say("never_remember", rule=refusal.rule)
        raise CommandError("NEVER_REMEMBER", message) from None
    reply.command = name
    return reply


def _parse(text: str) -> tuple[str | None, str]:
    head, _, rest = text.partition(" ")
    rest = rest.strip()
    head = head.lower()
    if head == "/memory":
        sub, _, query = rest.partition(" ")
        return ("memory search", query.strip()) if sub.lower() == "search" else (None, "")
    if head == "/forget" and rest == "--all":
        return "forget --all", ""
    if head in ("/remember", "/remember-project", "/forget", "/memories"):
        return head[1:], rest
    return None, ""


def _remember(context: CommandContext, content: str) -> CommandReply:
    if not content:
        raise CommandError("VALIDATION_ERROR", context.say("need_text"))
    memory, created = services.memory_remember(
        owner=context.user,
        content=content,
        scope=Scope.USER,
        actor=context.user,
        actor_label=context.actor_label,
    )
    if not created:
        return _already_known(context, memory, "/settings/memories")
    return CommandReply(
        "", context.say("remembered", content=memory.content), context.language, True, [memory]
    )


def _already_known(context: CommandContext, memory: Memory, page: str) -> CommandReply:
    """/remember of something known already (extraction's duplicate test): nothing is
    stored twice; the reply links to the memory there is."""
    reply = context.say("known", content=memory.content, url=context.link(memory.page_url(page)))
    return CommandReply("", reply, context.language, False, [memory])


def _remember_project(context: CommandContext, content: str) -> CommandReply:
    if not content:
        raise CommandError("VALIDATION_ERROR", context.say("need_text"))
    project = context.project
    if project is None:
        raise CommandError("VALIDATION_ERROR", context.say("need_project"))
    if not can_write_project(context.user, project):
        raise CommandError("FORBIDDEN", context.say("viewer", project=project.name))
    memory, created = services.memory_remember(
        owner=context.user,
        content=content,
        scope=Scope.PROJECT,
        project=project,
        actor=context.user,
        actor_label=context.actor_label,
    )
    if not created:
        return _already_known(context, memory, f"/projects/{project.slug}/memories")
    reply = context.say("remembered_project", project=project.name, content=memory.content)
    return CommandReply("", reply, context.language, True, [memory])


def _personal(context: CommandContext) -> MemoryQuerySet:
    """What /forget may trash: the user's own personal and conversation memories, locked
    (in the caller's transaction) so that of two /forget at once, the one that waited finds
    them trashed and says so, rather than replying with an undo token that undoes nothing."""
    return (
        Memory.objects.alive()
        .filter(owner=context.user, scope__in=[Scope.USER, Scope.CONVERSATION])
        .defer("embedding", "search_vector", "search_document")
        .order_by("id")
        .select_for_update(of=("self",))
    )


def _forget(context: CommandContext, words: str) -> CommandReply:
    raw = tsquery(words, match_all=True)
    if not raw:
        raise CommandError("VALIDATION_ERROR", context.say("need_words"))
    query = SearchQuery(raw, search_type="raw", config=SEARCH_CONFIG)
    with transaction.atomic():
        matches = list(_personal(context).filter(search_vector=query)[:FORGET_LIMIT])
        if not matches:
            return CommandReply("", context.say("forgot_none", words=words), context.language)
        batch = services.memories_delete(
            memories=matches, actor=context.user, actor_label=context.actor_label
        )
    reply = context.say("forgot", count=len(matches), items=_items(matches))
    return CommandReply("", reply, context.language, True, matches, batch)


def _forget_all(context: CommandContext, _argument: str) -> CommandReply:
    with transaction.atomic():
        memories = list(_personal(context))
        if not memories:
            return CommandReply("", context.say("forgot_all_none"), context.language)
        batch = services.memories_delete(
            memories=memories, actor=context.user, actor_label=context.actor_label
        )
    reply = context.say("forgot_all", count=len(memories))
    return CommandReply("", reply, context.language, True, memories[:LISTED], batch)


def _summary(context: CommandContext, _argument: str) -> CommandReply:
    pool = chat_pool(context.user, project=context.project, conversation=context.conversation)
    counts = dict(pool.values_list("scope").annotate(n=Count("id")).order_by())
    total = sum(counts.values())
    if not total:
        return CommandReply("", context.say("summary_none"), context.language)
    names = MESSAGES[context.language]["scopes"]
    breakdown = ", ".join(
        f"{names[scope]} {counts[scope]}"  # type: ignore[index]
        for scope in Scope.values
        if counts.get(scope)
    )
    top = list(
        pool.defer("embedding", "search_vector", "search_document").order_by(
            "-pinned", "-importance", "-created_at", "-id"
        )[:LISTED]
    )
    reply = (
        context.say("summary", count=total, breakdown=breakdown)
        + "\n"
        + context.say("summary_top", items=_items(top))
    )
    return CommandReply("", reply, context.language, False, top)


def _search(context: CommandContext, query: str) -> CommandReply:
    if not query:
        raise CommandError("VALIDATION_ERROR", context.say("need_query"))
    found = [item.memory for item in search_memories(context.user, query, limit=LISTED).memories]
    if not found:
        return CommandReply("", context.say("found_none", query=query), context.language)
    reply = context.say("found", count=len(found), query=query, items=_items(found))
    return CommandReply("", reply, context.language, False, found)


HANDLERS = {
    "remember": _remember,
    "remember-project": _remember_project,
    "forget": _forget,
    "forget --all": _forget_all,
    "memories": _summary,
    "memory search": _search,
}


def undo_forget(
    user: User, token: uuid.UUID, *, language: str, actor_label: str = ""
) -> tuple[str, list[Memory]] | None:
    """Bring back what a /forget trashed; None when the token is not one of the user's."""
    if not batch_undoable_by(user, token):
        return None
    memory_ids = MemoryEvent.objects.filter(batch=token).values("memory_id")
    if not Memory.objects.in_trash().filter(pk__in=memory_ids).exists():
        return say(language, "nothing_to_undo"), []
    restored = services.memory_undo_batch(batch=token, actor=user, actor_label=actor_label)
    return say(language, "undone", count=len(restored)), restored
