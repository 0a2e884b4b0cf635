from __future__ import annotations

import pytest

from accounts.models import MemorySettings
from memories.models import Memory, Scope
from tests.recall_helpers import ApiClient, error_code, remember

pytestmark = pytest.mark.django_db


def run(api, command, **fields):
    response = api.post("/commands", {"command": command, **fields})
    assert response.status_code == 200, response.content
    return response.json()


def test_remember_in_english_and_chinese(alice):
    api = ApiClient(alice)

    english = run(api, "/remember Always use vitest")
    chinese = run(api, "/remember 总是使用 vitest")

    assert english["reply"] == "Remembered: “Always use vitest”."
    assert english["language"] == "en" and english["changed"] is True
    assert chinese["reply"] == "已记住：“总是使用 vitest”。"
    assert chinese["language"] == "zh"
    memories = Memory.objects.order_by("id")
    assert [(m.content, m.scope, m.origin) for m in memories] == [
        ("Always use vitest", "user", "manual"),
        ("总是使用 vitest", "user", "manual"),
    ]
    assert english["memories"][0]["id"] == memories[0].pk


def test_remember_project(alice, vera, project):
    api = ApiClient(alice)

    english = run(api, "/remember-project Uses Drizzle ORM", project=project.slug)
    chinese = run(api, "/remember-project 使用 Drizzle ORM", project=project.pk)

    assert english["reply"] == "Remembered for project Track Survey: “Uses Drizzle ORM”."
    assert chinese["reply"] == "已为项目 Track Survey 记住：“使用 Drizzle ORM”。"
    assert Memory.objects.filter(scope=Scope.PROJECT, project=project).count() == 2
    missing = api.post("/commands", {"command": "/remember-project 没有项目"})
    assert error_code(missing) == "VALIDATION_ERROR"
    assert "project" in missing.json()["error"]["message"]
    viewer = ApiClient(vera).post(
        "/commands", {"command": "/remember-project nope", "project": project.pk}
    )
    assert error_code(viewer) == "FORBIDDEN"
    assert Memory.objects.count() == 2


def test_forget_lists_matches_and_undo_brings_them_back(alice):
    vitest = remember(alice, "Always use vitest")
    remember(alice, "Prefers tabs")
    api = ApiClient(alice)

    reply = run(api, "/forget vitest")

    assert reply["reply"] == "Forgot 1 memory:\n- Always use vitest\nYou can undo this."
    assert [m["id"] for m in reply["memories"]] == [vitest.pk]
    vitest.refresh_from_db()
    assert vitest.deleted_at is not None
    undo = api.post("/commands/undo", {"undo_token": reply["undo_token"]})
    assert undo.status_code == 200
    assert undo.json()["reply"] == "Brought back 1 memory."
    vitest.refresh_from_db()
    assert vitest.deleted_at is None
    again = api.post("/commands/undo", {"undo_token": reply["undo_token"]}).json()
    assert again["reply"] == "There is nothing left to undo."


def test_forget_in_chinese(alice):
    remember(alice, "总是使用 vitest 写测试")
    remember(alice, "喜欢喝绿茶")
    api = ApiClient(alice)

    reply = run(api, "/forget 绿茶")
    nothing = run(api, "/forget 咖啡")

    assert reply["reply"] == "已忘记 1 条记忆：\n- 喜欢喝绿茶\n可以撤销。"
    assert nothing["reply"] == "没有与“咖啡”匹配的记忆，未删除任何内容。"
    assert nothing["undo_token"] is None and nothing["changed"] is False
    assert list(Memory.objects.alive().values_list("content", flat=True)) == [
        "总是使用 vitest 写测试"
    ]


def test_forget_all_in_both_languages(alice, project):
    remember(alice, "One")
    remember(alice, "Two")
    shared = remember(alice, "Project knowledge", scope=Scope.PROJECT, project=project)
    api = ApiClient(alice, **{"Accept-Language": "zh-CN,zh;q=0.9"})

    reply = run(api, "/forget --all")

    assert reply["reply"] == "已忘记你的全部 2 条个人记忆，可以撤销。"
    assert list(Memory.objects.alive().values_list("pk", flat=True)) == [shared.pk]
    assert run(api, "/forget --all", language="en")["reply"] == (
        "You have no personal memories to forget."
    )
    api.post("/commands/undo", {"undo_token": reply["undo_token"]})
    assert Memory.objects.alive().count() == 3


def test_undo_token_of_someone_else_is_not_found(alice, charlie):
    remember(alice, "Private thing")
    token = run(ApiClient(alice), "/forget private")["undo_token"]

    response = ApiClient(charlie).post("/commands/undo", {"undo_token": token})

    assert error_code(response) == "NOT_FOUND"
    assert Memory.objects.get().deleted_at is not None


def test_memories_summary(alice, project):
    remember(alice, "Prefers dark mode", kind="preference", pinned=True)
    remember(alice, "Works in Shanghai", kind="fact")
    remember(alice, "Uses PostGIS", scope=Scope.PROJECT, project=project)
    api = ApiClient(alice)

    english = run(api, "/memories", project=project.pk)
    chinese = run(api, "/memories", language="zh")

    assert english["reply"].startswith("3 memories in effect (personal 2, project 1).")
    assert "- Prefers dark mode" in english["reply"].splitlines()[2]
    assert chinese["reply"].startswith("当前生效的记忆共 2 条（个人 2）。")
    assert english["changed"] is False


def test_memory_search(alice):
    remember(alice, "Deadline for the bridge report is March")
    remember(alice, "桥梁报告的截止日期是三月")
    api = ApiClient(alice)

    english = run(api, "/memory search bridge report")
    chinese = run(api, "/memory search 截止日期")
    nothing = run(api, "/memory search zebra")

    assert english["reply"].startswith("1 memory matches “bridge report”:")
    assert "Deadline for the bridge report is March" in english["reply"]
    # "截止" and "deadline" are one concept: the Chinese memory first, the English one after.
    assert chinese["reply"] == (
        "有 2 条记忆与“截止日期”匹配：\n- 桥梁报告的截止日期是三月\n"
        "- Deadline for the bridge report is March"
    )
    assert nothing["reply"] == "No memory matches “zebra”."


def test_memory_off_changes_nothing_and_says_how_to_turn_it_on(alice):
    remember(alice, "Existing")
    MemorySettings.objects.filter(user=alice).update(memory_enabled=False)
    api = ApiClient(alice)

    for command in ("/remember x", "/forget existing", "/forget --all", "/memories"):
        reply = run(api, command)
        assert reply["changed"] is False
        assert reply["reply"].startswith("Memory is off, so nothing was changed.")
        # The link is to this server as the caller reached it, and to a setting that exists.
        assert reply["reply"].endswith(
            "Turn it on in Memory settings: http://testserver/settings/memories#memory-settings"
        )
    chinese = run(api, "/remember 使用 pnpm")
    assert chinese["reply"].startswith("记忆功能未开启")
    assert list(Memory.objects.alive().values_list("content", flat=True)) == ["Existing"]


def test_unknown_or_empty_commands(alice):
    api = ApiClient(alice)

    unknown = api.post("/commands", {"command": "/dance"})
    empty = api.post("/commands", {"command": "/remember"})
    chinese_empty = api.post("/commands", {"command": "/memory search", "language": "zh"})

    assert error_code(unknown) == "VALIDATION_ERROR"
    assert "/remember" in unknown.json()["error"]["message"]
    assert error_code(empty) == "VALIDATION_ERROR"
    assert chinese_empty.json()["error"]["message"].startswith("请告诉我要找什么")


@pytest.mark.django_db(transaction=True)
def test_concurrent_forgets_hand_out_one_live_undo_token(alice):
    """Issue 42, item 6: each of 20 /forget at once answered "Forgot 1" with an undo token,
    of which only one undid anything."""
    import threading

    from django.db import connection

    remember(alice, "Always use vitest")
    apis = [ApiClient(alice) for _ in range(8)]
    start = threading.Barrier(len(apis))
    replies = []

    def forget(api):
        start.wait()
        try:
            replies.append(run(api, "/forget vitest"))
        finally:
            connection.close()

    threads = [threading.Thread(target=forget, args=(api,)) for api in apis]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    tokens = [reply["undo_token"] for reply in replies if reply["undo_token"]]
    assert len(replies) == len(apis) and len(tokens) == 1
    assert sum(reply["changed"] for reply in replies) == 1
    undone = apis[0].post("/commands/undo", {"undo_token": tokens[0]})
    assert undone.status_code == 200
    assert Memory.objects.alive().filter(content="Always use vitest").exists()
