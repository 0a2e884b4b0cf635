from __future__ import annotations

from datetime import date, datetime

import pytest

from conversations.extraction import WindowMessage
from conversations.extraction.rules import (
    RulesExtractor,
    candidate_from_sentence,
    sentence_candidates,
)
from conversations.extraction.summary import summary_items

# (sentence, kind, content, subject, value)
MATCHES = [
    ("I prefer Vue over React", "preference", "Prefers Vue over React", "preference:frontend framework", "vue"),
    ("I now prefer React.", "preference", "Prefers React", "preference:frontend framework", "react"),
    ("I always use tabs for indentation", "preference", "Always use tabs for indentation", "preference:indentation", "tabs"),
    ("Never use semicolons", "preference", "Never use semicolons", "preference:semicolons", "not semicolons"),
    ("My favourite editor is Neovim", "preference", "Favourite editor is Neovim", "preference:editor", "neovim"),
    ("我喜欢用 Vim 写代码", "preference", "喜欢用 Vim 写代码", "preference:editor", "vim"),
    ("我比较偏好简洁的回答", "preference", "偏好简洁的回答", "preference:简洁的回答", "简洁的回答"),
    ("我习惯用 pnpm", "preference", "习惯用 pnpm", "preference:package manager", "pnpm"),
    ("请不要用 emoji", "preference", "不要用 emoji", "preference:emoji", "not emoji"),
    ("I'm a senior backend engineer", "fact", "Is a senior backend engineer", "user:role", "senior backend engineer"),
    ("I work at Acme Corp", "fact", "Works at Acme Corp", "user:employer", "acme corp"),
    ("我是一名测绘工程师", "fact", "是测绘工程师", "user:role", "测绘工程师"),
    ("The project uses WGS84 for all coordinates", "fact", "The project uses WGS84 for all coordinates", "project:coordinate system", "wgs84"),
    ("We use pytest for tests", "fact", "The project uses pytest for tests", "project:test framework", "pytest"),
    ("项目使用 CGCS2000 坐标系", "fact", "项目使用 CGCS2000 坐标系", "project:coordinate system", "cgcs2000"),
    ("We chose PostgreSQL over MySQL because of PostGIS", "decision", "Chose PostgreSQL over MySQL", "decision:database", "postgresql"),
    ("我们最终选择了 PostgreSQL 而不是 MySQL", "decision", "选择 PostgreSQL 而不是 MySQL", "decision:database", "postgresql"),
    ("We've decided to drop Python 3.9 support", "decision", "Decided to drop Python 3.9 support", "", ""),
    ("我们决定下周发布", "decision", "决定下周发布", "", ""),
    ("The deploy failed because the migration locked the table, need to run it concurrently", "lesson",
     "The deploy failed because the migration locked the table; need to run it concurrently", "", ""),
    ("部署失败是因为缺少环境变量，需要先配置 .env", "lesson", "部署失败是因为缺少环境变量，需要先配置 .env", "", ""),
    ("需要先安装 GDAL 才能导入 shapefile", "lesson", "需要安装 GDAL 才能导入 shapefile", "", ""),
    ("I plan to learn Rust this year", "goal", "Plans to learn Rust this year", "plan:learn rust", "learn rust this year"),
    ("我计划下个月学习 Rust", "goal", "计划下个月学习 Rust", "plan:学习 rust", "下个月学习 rust"),
]  # fmt: skip

NOT_MEMORIES = [
    "Do you prefer Vue?",
    "If I prefer Vue, what changes?",
    "My colleague prefers Vue",
    "I like it",
    "I prefer that",
    "The weather is nice today",
    "你喜欢什么？",
    "你觉得用 Vue 好吗",
    "我喜欢这个想法",
    "如果我喜欢 Vue 会怎样",
    "不要紧",
    "我们用一下这个",
    "他们决定了吗？",
]


@pytest.mark.parametrize(("sentence", "kind", "content", "subject", "value"), MATCHES)
def test_rule_patterns_match_in_both_languages(
    sentence: str, kind: str, content: str, subject: str, value: str
) -> None:
    candidate = candidate_from_sentence(sentence, message_ids=[7])
    assert candidate is not None
    assert (candidate.kind, candidate.content) == (kind, content)
    assert (candidate.subject, candidate.value) == (subject, value)
    assert candidate.quote == sentence
    assert candidate.message_ids == [7]


@pytest.mark.parametrize("sentence", NOT_MEMORIES)
def test_questions_hypotheticals_and_empty_values_are_not_memories(sentence: str) -> None:
    assert candidate_from_sentence(sentence, message_ids=[1]) is None


def test_only_user_messages_are_mined_sentence_by_sentence() -> None:
    messages = [
        WindowMessage(
            id=1, position=1, role="user", content="Hi! I prefer Vue. We use pytest for tests."
        ),
        WindowMessage(
            id=2, position=2, role="assistant", content="I prefer React myself, honestly."
        ),
    ]
    candidates = RulesExtractor().extract(messages)
    assert [c.content for c in candidates] == ["Prefers Vue", "The project uses pytest for tests"]
    assert all(c.message_ids == [1] for c in candidates)
    assert candidates[0].importance == 0.9
    assert candidates[1].about_project


SUMMARY = """# Session summary

## Goal
Ship the survey importer.

## Instructions
- Always run the linter before committing
- 提交前先运行测试

## Discoveries
- The project uses CGCS2000
- GDAL 3.8 reads the old shapefiles

## Accomplished
- [x] Parsed the station list

## Relevant files
- importer/stations.py
"""


def test_summary_sections_become_their_kinds() -> None:
    assert summary_items(SUMMARY) == [
        ("decision", "Ship the survey importer."),
        ("pattern", "Always run the linter before committing"),
        ("pattern", "提交前先运行测试"),
        ("fact", "The project uses CGCS2000"),
        ("fact", "GDAL 3.8 reads the old shapefiles"),
        ("context", "Parsed the station list"),
    ]


def test_summary_items_keep_rule_subjects_and_are_about_the_project() -> None:
    candidates = RulesExtractor().extract([], SUMMARY)
    by_content = {c.content: c for c in candidates}
    assert by_content["The project uses CGCS2000"].subject == "project:coordinate system"
    assert by_content["The project uses CGCS2000"].kind == "fact"
    assert by_content["Parsed the station list"].kind == "context"
    assert all(c.about_project and c.message_ids == [] for c in candidates)


def test_chinese_summary_headings() -> None:
    assert summary_items("## 目标\n完成导入\n## 发现\n- 项目使用 CGCS2000\n") == [
        ("decision", "完成导入"),
        ("fact", "项目使用 CGCS2000"),
    ]


# Kinds of first-person statement, each with (sentence, kind, content). Sentences of our own.
STATEMENTS = [
    (
        "I went to a climbing gym with my cousin.",
        "fact",
        "Went to a climbing gym with their cousin",
    ),
    ("I just got back from Lisbon", "fact", "Got back from Lisbon"),
    ("I finished my thesis draft", "fact", "Finished their thesis draft"),
    ("我去了西湖", "fact", "去了西湖"),
    ("我参加了一个马拉松", "fact", "参加了一个马拉松"),
    ("I've been playing guitar for years", "fact", "Has been playing guitar for years"),
    ("我学吉他三年了", "fact", "学吉他三年"),
    ("My sister Lucía runs a bakery", "fact", "Sister Lucía runs a bakery"),
    ("I have two kids", "fact", "Has two kids"),
    ("My husband is a firefighter", "fact", "Husband is a firefighter"),
    ("我女儿今年上小学了", "fact", "女儿今年上小学"),
    ("I have a dog named Max", "fact", "Has a dog named Max"),
    ("我养了一只猫，叫团子", "fact", "有一只猫，叫团子"),
    ("I live in Porto", "fact", "Lives in Porto"),
    ("I'm from Valparaíso", "fact", "Is from Valparaíso"),
    ("I work as a pharmacist", "fact", "Works as a pharmacist"),
    ("I'm a nurse", "fact", "Is a nurse"),
    ("I got a job at Globex", "fact", "Got a job at Globex"),
    ("我在一家医院工作", "fact", "在一家医院工作"),
    ("我是一名护士", "fact", "是护士"),
    ("I'm allergic to shellfish", "fact", "Allergic to shellfish"),
    ("I can't eat gluten", "fact", "Cannot eat gluten"),
    ("我对花粉过敏", "fact", "对花粉过敏"),
    ("I really enjoy sailing", "preference", "Enjoys sailing"),
    ("I love Korean food", "preference", "Loves Korean food"),
    ("我很喜欢爬山", "preference", "喜欢爬山"),
    ("I'm planning to visit Kyoto", "goal", "Plans to visit Kyoto"),
    ("I've decided to sell my car", "decision", "Decided to sell their car"),
    ("Actually I'm not going to Kyoto anymore", "goal", "No longer plans to Kyoto"),
    ("我打算明年考研", "goal", "计划明年考研"),
    ("我决定辞职", "decision", "决定辞职"),
    ("We're planning to go to Italy", "goal", "Plans to go to Italy"),
]

NOT_STATEMENTS = [
    "If I ever moved to Japan I'd learn Japanese",
    "如果我搬到日本，我会学日语",
    "Did you go to the concert?",
    "你去过北京吗？",
    "Good morning! How are you?",
    "The weather is lovely today",
    "My colleague prefers Vue",
    "I think so",
]


@pytest.mark.parametrize(("sentence", "kind", "content"), STATEMENTS)
def test_kinds_of_personal_statement(sentence: str, kind: str, content: str) -> None:
    candidates = sentence_candidates(sentence, message_ids=[3])
    assert [(c.kind, c.content) for c in candidates][:1] == [(kind, content)]


@pytest.mark.parametrize("sentence", NOT_STATEMENTS)
def test_questions_small_talk_and_hypotheticals_are_not_stored(sentence: str) -> None:
    assert sentence_candidates(sentence, message_ids=[3]) == []


def test_a_friend_is_not_the_speaker() -> None:
    contents = [c.content for c in sentence_candidates("My friend lives in Paris", message_ids=[1])]
    assert "Lives in Paris" not in contents
    assert contents in ([], ["Friend lives in Paris"])


def test_several_memories_in_one_sentence() -> None:
    candidates = sentence_candidates("I live in Berlin and I work at Acme.", message_ids=[1])
    assert [(c.content, c.subject) for c in candidates] == [
        ("Works at Acme", "user:employer"),
        ("Lives in Berlin", "user:location"),
    ] or [(c.content, c.subject) for c in candidates] == [
        ("Lives in Berlin", "user:location"),
        ("Works at Acme", "user:employer"),
    ]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I live in Berlin", "I moved to Lisbon"),
        ("I work at Acme", "I got a job at Globex"),
        ("I prefer Vue", "I now prefer React"),
        ("我喜欢用 Vue", "我现在更喜欢 React"),
        ("I'm planning to go to Italy in May", "Actually I'm not going to go to Italy anymore"),
        ("The project uses MySQL", "The project uses PostgreSQL"),
    ],
)
def test_a_later_statement_on_the_same_subject_contradicts(older: str, newer: str) -> None:
    (first,) = sentence_candidates(older, message_ids=[1])
    (second,) = sentence_candidates(newer, message_ids=[2])
    assert first.kind == second.kind
    assert first.subject == second.subject != ""
    assert first.value != second.value


def test_other_speakers_are_named_and_dated() -> None:
    sent = datetime(2023, 5, 8, 20, 0)
    messages = [
        WindowMessage(id=1, position=1, role="user", content="I went to a pottery class yesterday",
                      speaker="Mia", is_account_user=False, sent_at=sent),
        WindowMessage(id=2, position=2, role="user", content="I went to a pottery class yesterday",
                      speaker="Sam", sent_at=sent),
        WindowMessage(id=3, position=3, role="user", content="昨天我去了陶艺课",
                      speaker="小林", is_account_user=False, sent_at=sent),
    ]  # fmt: skip
    candidates = RulesExtractor().extract(messages)
    assert [(c.content, c.speaker, c.event_date) for c in candidates] == [
        ("Mia went to a pottery class on 7 May 2023", "Mia", date(2023, 5, 7)),
        ("Went to a pottery class on 7 May 2023", "", date(2023, 5, 7)),
        ("小林2023年5月7日去了陶艺课", "小林", date(2023, 5, 7)),
    ]
    assert WindowMessage(id=4, position=4, role="assistant", content="x").is_account_user is False


def test_what_the_user_adopts_of_the_assistant_turn() -> None:
    messages = [
        WindowMessage(id=1, position=1, role="user", content="Which queue should I use for jobs?"),
        WindowMessage(id=2, position=2, role="assistant",
                      content="For your case I'd use Redis Streams with a consumer group."),
        WindowMessage(id=3, position=3, role="user", content="OK, I'll go with your suggestion."),
        WindowMessage(id=4, position=4, role="assistant", content="我建议用 Zotero 管理文献，插件很好用。"),
        WindowMessage(id=5, position=5, role="user", content="好的，就按你说的"),
        WindowMessage(id=6, position=6, role="assistant", content="I'd use Celery for this."),
        WindowMessage(id=7, position=7, role="user", content="Hmm, I'm not convinced yet."),
    ]  # fmt: skip
    candidates = RulesExtractor().extract(messages)
    adopted = [c for c in candidates if c.kind == "decision"]
    assert [(c.content, c.message_ids) for c in adopted] == [
        ("Went with the suggestion: use Redis Streams with a consumer group", [2, 3]),
        ("采纳建议：用 Zotero 管理文献", [4, 5]),
    ]
    assert not any("Celery" in c.content for c in candidates)


def test_clean_text() -> None:
    (chose,) = sentence_candidates("我们决定选择 PostgreSQL 而不是 MySQL", message_ids=[1])
    assert "选择选择" not in chose.content
    (always,) = sentence_candidates("- always write type hints", message_ids=[1])
    assert always.content == "Always write type hints"
    assert always.subject == "preference:type hints"
    (lesson,) = sentence_candidates(
        "The build failed because the cache was stale; need to clear it first", message_ids=[1]
    )
    assert lesson.kind == "lesson"
    assert lesson.content.endswith("need to clear it first")
    (named,) = sentence_candidates("项目的数据库为 PostgreSQL", message_ids=[1])
    assert named.subject == "project:database"


# Kinds of talk that are not facts: greetings, thanks and wishes, reactions, feelings for the
# listener, remarks on their news, questions.
SMALL_TALK = [
    "That's awesome!",
    "Haha, so true",
    "How have you been?",
    "真不错！",
    "Thanks for sharing!",
    "That sounds like so much fun, I'm glad you had a great time with Priya!",
    "Wow, 7 years is a long time!",
    "That's great to hear, Tom!",
    "Happy new year to you, Ana and Rob!",
    "Good for you, a 5K is huge!",
    "I'm so sorry to hear about your 2 cats.",
    "太好了，终于不用每天通勤两小时了！",
    "哇，已经减了6公斤了",
    "恭喜恭喜，你终于拿到offer了！",
]
# First-person statements of fact beside them are still kept.
FACTS_BESIDE_TALK = [
    ("Same, I ran 5 miles on Monday.", "Ran 5 miles on 1 May 2023"),
    ("Perfect, sending the invoice tomorrow.", "Perfect, sending the invoice on 9 May 2023."),
    ("哇，这个问题我上周刚好遇到了！", "哇，这个问题我2023年5月1日那周刚好遇到了！"),
    ("I ran 12 miles on Saturday!", "Ran 12 miles on 6 May 2023"),
    ("成人零基础的，每周二、周四晚上", "成人零基础的，每周二、周四晚上"),
]


@pytest.mark.parametrize("sentence", SMALL_TALK)
@pytest.mark.parametrize("speaker", ["", "Mia"])
def test_small_talk_is_never_a_memory(sentence: str, speaker: str) -> None:
    said = datetime(2023, 5, 8, 12)
    assert sentence_candidates(sentence, message_ids=[1], speaker=speaker, sent_at=said) == []


@pytest.mark.parametrize(("sentence", "content"), FACTS_BESIDE_TALK)
def test_facts_beside_small_talk_are_kept(sentence: str, content: str) -> None:
    said = datetime(2023, 5, 8, 12)
    candidates = sentence_candidates(sentence, message_ids=[1], sent_at=said)
    assert [c.content for c in candidates] == [content]
