"""What extraction reads in each clause of a sentence, through real runs, in both languages:
a compound sentence's clauses of different kinds, a Chinese clause that goes on with the one
before, what is told before a question, the date a rule's wording would lose, a statement that
goes on in the next sentence, "them" for the thing just named, and what is left of a sentence
once a one-off problem or a plan given up is taken out."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from memories.models import Memory
from tests.extraction_helpers import conversation_with, extracted


def _kinds_with(stored: list[tuple[str, str]], term: str) -> list[str]:
    return [kind for kind, content in stored if term.casefold() in content.casefold()]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("said", "fact_term", "other_kind", "other_term"),
    [
        (
            "Quick context: the invoicing service is built on FastAPI, and I prefer Alembic"
            " migrations over hand-written SQL scripts.",
            "FastAPI",
            "preference",
            "Alembic",
        ),
        (
            "We host the monorepo on GitLab, and I prefer squash merges instead of merge commits.",
            "GitLab",
            "preference",
            "squash",
        ),
        (
            "I move 20% of my salary into savings every payday, and all my subscriptions go on"
            " my Monzo card.",
            "Monzo",
            "pattern",
            "savings",
        ),
        (
            "I've only used Python and Go professionally, so I want to finish the Rust book.",
            "Python and Go",
            "goal",
            "Rust book",
        ),
        ("我在准备雅思，目标是7分；背单词我更喜欢用 Anki。", "", "goal", "雅思"),
        (
            "我现在每周游泳三次；另外准备参加2026年5月17日的千岛湖半程马拉松。",
            "",
            "pattern",
            "游泳",
        ),
        ("我住在成都，周末更喜欢去青城山徒步，不太爱逛商场。", "成都", "preference", "徒步"),
    ],
)
def test_each_clause_of_a_compound_sentence_keeps_its_kind(
    alice: Any, said: str, fact_term: str, other_kind: str, other_term: str
) -> None:
    stored = extracted(alice, ("user", said))
    if fact_term:
        assert "fact" in _kinds_with(stored, fact_term), stored
    assert other_kind in _kinds_with(stored, other_term), stored


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("我住在北京，已经五年了。", "住在北京，已经五年了"),
        (
            "我们项目的数据库是 PostgreSQL 15，写复杂查询的时候我更喜欢用 CTE，不喜欢嵌套子查询。",
            "CTE，不喜欢嵌套子查询",
        ),
    ],
)
def test_a_chinese_clause_goes_on_with_the_statement_before_it(
    alice: Any, said: str, kept: str
) -> None:
    stored = extracted(alice, ("user", said))
    assert any(kept in content for _kind, content in stored), stored
    assert not any(content.startswith(("已经", "不喜欢")) for _kind, content in stored)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("said", "kept", "not_kept"),
    [
        ("对了，家里有两只猫，路由器放哪儿不容易被它们碰倒？", "两只猫", "路由器放哪儿"),
        ("I have two cats, where should the router go?", "two cats", "router"),
        # What is told before a question that is itself a question is not a fact.
        ("问一下，TCP 建立连接为什么是三次握手，不是两次？", "", "TCP"),
    ],
)
def test_what_is_told_before_a_question_is_kept(
    alice: Any, said: str, kept: str, not_kept: str
) -> None:
    stored = extracted(alice, ("user", said))
    contents = " ".join(content for _kind, content in stored)
    if kept:
        assert kept in contents, stored
    assert not_kept not in contents, stored


@pytest.mark.django_db
def test_a_stated_date_stays_in_the_rules_wording_of_its_own_clause(alice: Any) -> None:
    stored = extracted(alice, ("user", "I start at Wren Analytics on 2 March 2026."))
    assert ("fact", "Starts at Wren Analytics on 2 March 2026") in stored
    stored = extracted(
        alice,
        ("user", "We are moving from Berlin to Munich in June 2026, I got a new job at Siemens"),
    )
    assert ("fact", "Got a job at Siemens") in stored
    assert any("Munich" in content and "June 2026" in content for _kind, content in stored)


@pytest.mark.django_db
def test_what_a_colon_adds_to_a_statement_stays_with_it(alice: Any) -> None:
    stored = extracted(
        alice,
        ("user", "I write Python and I like a functional style: composition over inheritance."),
    )
    assert any("composition over inheritance" in content for _kind, content in stored), stored


@pytest.mark.django_db
def test_them_in_a_request_names_what_it_stands_for(alice: Any) -> None:
    stored = extracted(
        alice,
        ("user", "My colleagues send me questions in German, please answer them in plain English."),
    )
    assert any("answer the questions in plain English" in content for _kind, content in stored)
    assert not any(" them " in content for _kind, content in stored), stored


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("turn", "whole"),
    [
        (
            "Big news: I accepted an offer from Halden Robotics! I start on 4 May 2026 as a"
            " senior backend engineer.",
            ["Halden Robotics", "4 May 2026", "senior backend engineer"],
        ),
        (
            "Lesson learned: a backup that depends on me plugging in a drive isn't a backup."
            " It has to run automatically.",
            ["backup", "automatically"],
        ),
    ],
)
def test_a_statement_that_goes_on_in_the_next_sentence_is_one_memory(
    alice: Any, turn: str, whole: list[str]
) -> None:
    stored = extracted(alice, ("user", turn))
    assert any(all(term in content for term in whole) for _kind, content in stored), stored


@pytest.mark.django_db
def test_them_is_the_thing_just_named(alice: Any) -> None:
    stored = extracted(alice, ("user", "I've gone back to paper books; I prefer them in bed."))
    assert ("preference", "Prefers paper books in bed") in stored
    assert not any("them" in content for _kind, content in stored)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("turns", "kept", "dropped"),
    [
        (
            [
                "My laptop SSD died on Tuesday and I lost two weeks of work. The backup drive"
                " hadn't been plugged in since August."
            ],
            [],
            ["SSD", "backup drive"],
        ),
        (
            [
                "We were going to do Greece in September but with the interview, we're going up"
                " to Glasgow instead."
            ],
            ["Glasgow"],
            ["Greece"],
        ),
        (
            ["有个坏消息，数据校验没跑完，陈总决定星图上线推迟到6月10号。"],
            ["推迟到"],
            ["没跑完"],
        ),
    ],
)
def test_a_one_off_problem_and_a_plan_given_up_go_what_replaces_them_stays(
    alice: Any, turns: list[str], kept: list[str], dropped: list[str]
) -> None:
    stored = extracted(alice, *[("user", turn) for turn in turns])
    contents = " ".join(content for _kind, content in stored)
    for term in kept:
        assert term in contents, stored
    for term in dropped:
        assert term not in contents, stored


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("said", "kept", "broken"),
    [
        ("My supervisor wants Word files so she can track changes.", "Supervisor wants", ""),
        (
            "我室友阿杰在米哈游做游戏原画，作息跟我完全反过来。",
            "阿杰在米哈游做游戏原画，作息跟用户完全反过来",
            "跟我",
        ),
        ("My partner and I are off from 14 to 24 May 2026.", "They and their partner are", ""),
        # A Chinese sentence without a subject, right after one about someone named, and
        # 他 after a nickname (阿杰), are about them.
        (
            "我家猫叫年糕，今年12岁了。前阵子查出肾不太好，以后只能吃处方粮。",
            "年糕前阵子查出肾不太好",
            "",
        ),
        ("我室友阿杰在米哈游做游戏原画。他女朋友小雨是护士。", "阿杰女朋友小雨是护士", ""),
    ],
)
def test_people_in_the_users_life_read_as_themselves(
    alice: Any, said: str, kept: str, broken: str
) -> None:
    stored = extracted(alice, ("user", said))
    assert any(kept in content for _kind, content in stored), stored
    if broken:
        assert not any(broken in content for _kind, content in stored)


def _at(day: int) -> datetime:
    return datetime(2026, 3, day, 9, tzinfo=UTC)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("earlier", "later", "old", "new"),
    [
        (
            "我平时坐地铁上班，单程五十分钟。",
            "这个得更新一下：我现在更喜欢开车上班。",
            "地铁",
            "开车",
        ),
        ("I usually take the subway to work.", "These days I drive to work.", "subway", "Drives"),
    ],
)
def test_how_the_user_commutes_is_one_attribute_whatever_the_kind(
    alice: Any, earlier: str, later: str, old: str, new: str
) -> None:
    from conversations.extraction.runs import execute_run
    from conversations.models import ExtractionRun

    conversation = conversation_with(alice, ("user", earlier), ("user", later))
    conversation.messages.filter(position=1).update(sent_at=_at(1))
    conversation.messages.filter(position=2).update(sent_at=_at(2))
    run = ExtractionRun.objects.create(conversation=conversation, trigger="end")
    execute_run(run.pk)
    older = Memory.objects.get(content__contains=old)
    newer = Memory.objects.get(content__contains=new)
    assert older.superseded_by_id == newer.pk
    assert list(Memory.objects.in_effect()) == [newer]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("question", "reply", "kept"),
    [
        (
            "Nice stack. Where will it be deployed?",
            "Vercel.",
            ("fact", "Where will it be deployed? Vercel"),
        ),
        (
            "Good plan. How much time can you give it?",
            "An hour every weekday evening, nothing at weekends.",
            ("pattern", "How much time can the user give it? An hour every weekday evening"),
        ),
        (
            "Great. How do you like to get between cities?",
            "Trains, always.",
            ("preference", "How does the user like to get between cities? Trains, always"),
        ),
    ],
)
def test_a_short_answer_to_the_assistants_question_is_kept_with_it(
    alice: Any, question: str, reply: str, kept: tuple[str, str]
) -> None:
    stored = extracted(alice, ("assistant", question), ("user", reply))
    assert any(kind == kept[0] and kept[1] in content for kind, content in stored), stored


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("How are you feeling about the launch?", "Nervous but good."),
        ("Want me to draft it?", "Sure."),
        ("Where will it be deployed?", "Not sure yet."),
        ("What should we call it?", "Haha, no idea."),
        ("游泳对恢复挺有帮助的。要不要每周加一次间歇跑？", "我考虑一下。"),
    ],
)
def test_talk_in_answer_to_a_question_is_not_kept(alice: Any, question: str, reply: str) -> None:
    assert extracted(alice, ("assistant", question), ("user", reply)) == []
