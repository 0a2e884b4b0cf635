from __future__ import annotations

import pytest

from memoryapp.extraction import WindowMessage
from memoryapp.extraction.rules import RulesExtractor, candidate_from_sentence
from memoryapp.extraction.summary import summary_items

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
