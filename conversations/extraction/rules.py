"""The offline extractor: sentence patterns in English and Chinese.

Each user message is split into sentences; the first rule that matches a
sentence turns it into one candidate, written as a short statement ("Prefers
Vue over React", "项目使用 CGCS2000") with the sentence as its quote. Rules
aim for precision: questions, hypotheticals and statements about someone
else are not memories, and a value that is only a pronoun ("I prefer that")
says nothing. Assistant messages are not mined; only what the user said, and
the compaction summary (see summary.py), becomes memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings

from conversations.extraction import Candidate, WindowMessage
from conversations.extraction.summary import summary_items
from conversations.extraction.topics import find_topic
from memories.models import Kind

# Where a value ends: punctuation, or a clause that explains rather than states.
_END = (
    r"(?=\s*(?:[,;:，；：(（]|\b(?:because|since|but|so|as|when|unless|although|though)\b"
    r"|因为|但是|所以|$))"
)
_CJK_END = r"(?=[，,；;：:（(]|因为|但是|所以|不过|$)"
_NAME = r"(?-i:[A-Z])[\w&.-]*(?: (?-i:[A-Z])[\w&.-]*)*"

_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_QUESTION_START = re.compile(
    r"^(?:do|does|did|should|shall|can|could|would|will|is|are|what|which|how|why|where|when|"
    r"who|may|might)\b",
    re.IGNORECASE,
)
_HYPOTHETICAL_START = re.compile(
    r"^(?:if|suppose|imagine|assuming|maybe|perhaps|如果|假如|假设|要是|也许|或许)", re.IGNORECASE
)
_TRAILING_WORDS = re.compile(
    r"(?:\s+(?:too|now|instead|anymore|please|from now on|these days|nowadays|as well|for now))+$"
    r"|[了吧呢啊的哦呀]+$",
    re.IGNORECASE,
)
_EMPTY_VALUES = {
    "it", "this", "that", "them", "these", "those", "one", "so", "some", "something",
    "everything", "anything", "you", "me", "him", "her",
}  # fmt: skip
_EMPTY_CJK_PREFIXES = ("这", "那", "它", "你", "他", "她", "一下", "一点", "什么")

MAX_CONTENT_CHARS = 300


@dataclass(frozen=True)
class Rule:
    """One sentence pattern and what it becomes.

    ``template`` is filled from the pattern's named groups; a part in square
    brackets is kept only when every group it names matched. ``subject`` is
    the family of the statement ("preference", "project", "user:role"); with
    ``fixed`` it is the whole subject, otherwise the value's topic (or the
    value itself) completes it. ``negative`` statements ("never use X") have
    the opposite value of positive ones, so they contradict each other.
    """

    kind: str
    pattern: re.Pattern[str]
    template: str
    subject: str = ""
    fixed: bool = False
    negative: bool = False
    about_project: bool = False


def _rule(kind: str, pattern: str, template: str, **options: object) -> Rule:
    compiled = re.compile(pattern.replace("END", _END).replace("CJK$", _CJK_END), re.IGNORECASE)
    return Rule(kind, compiled, template, **options)  # type: ignore[arg-type]


P, F, D, L, G = Kind.PREFERENCE, Kind.FACT, Kind.DECISION, Kind.LESSON, Kind.GOAL

RULES: list[Rule] = [
    # Preferences (English)
    _rule(P, r"\bI(?: really| strongly| much| generally| usually| now)? prefer (?P<value>.+?)(?: (?:over|rather than|instead of) (?P<other>.+?))?END",
          "Prefers {value}[ over {other}]", subject="preference"),
    _rule(P, r"\b(?:I |please )?always use (?P<value>.+?)END", "Always use {value}", subject="preference"),
    _rule(P, r"\b(?:I |please )?never use (?P<value>.+?)END", "Never use {value}", subject="preference", negative=True),
    _rule(P, r"\bI (?:don't|do not) (?:like|want to use|use) (?P<value>.+?)END", "Does not like {value}", subject="preference", negative=True),
    _rule(P, r"^(?:please )?(?:don't|do not) (?P<verb>use|add|write|include|put) (?P<value>.+?)END", "Do not {verb} {value}", subject="preference", negative=True),
    _rule(P, r"\bmy (?:favou?rite|preferred|go-to) (?P<what>[\w .+#-]{2,30}?) is (?P<value>.+?)END", "Favourite {what} is {value}", subject="preference"),
    _rule(P, r"\bI(?:'ve| have)? (?:switched|moved|changed) (?:from (?P<other>.+?) )?to (?P<value>.+?)END", "Now uses {value}[ instead of {other}]", subject="preference"),
    _rule(P, r"\b(?:reply|respond|answer|write|talk)(?: to me)? in (?P<value>English|Chinese|Mandarin)\b", "Prefers replies in {value}", subject="preference"),
    # Facts about the user
    _rule(F, r"\bI(?:'m| am) (?P<article>a|an) (?P<value>(?:[\w-]+ ){0,3}?(?:engineer|developer|programmer|designer|manager|scientist|student|researcher|analyst|surveyor|architect|teacher|consultant|writer))\b",
          "Is {article} {value}", subject="user:role", fixed=True),
    _rule(F, rf"\bI work (?:at|for) (?P<value>{_NAME})", "Works at {value}", subject="user:employer", fixed=True),
    _rule(F, r"\bmy name is (?P<value>(?-i:[A-Z])\w+)", "Name is {value}", subject="user:name", fixed=True),
    _rule(F, rf"\bI (?:live|am based|'m based) in (?P<value>{_NAME})", "Lives in {value}", subject="user:location", fixed=True),
    _rule(F, r"\bmy (?P<what>time ?zone|native language|first language|mother tongue) is (?P<value>.+?)END", "{What} is {value}", subject="user:", fixed=True),
    # Facts about the project
    _rule(F, r"\b(?P<owner>the|our|this) (?P<noun>project|app|application|codebase|repo|repository|service|backend|frontend|system|website|api) (?P<verb>uses|is using|runs on|is built (?:on|with)|is written in|depends on|targets|stores (?:data|everything) in) (?P<value>.+?)END",
          "The {noun} {verb} {value}", subject="project", about_project=True),
    _rule(F, r"\bwe(?:'ve| have)? (?:switched|moved|migrated|changed) (?:from (?P<other>.+?) )?to (?P<value>.+?)END", "The project now uses {value}[ instead of {other}]", subject="project", about_project=True),
    _rule(F, r"\bwe(?:'re| are)? (?:use|using|build (?:on|with)|deploy (?:to|on)|store (?:data|everything) in) (?P<value>.+?)(?: (?:for|to) (?P<other>[^,;]+?))?END",
          "The project uses {value}[ for {other}]", subject="project", about_project=True),
    # Decisions
    _rule(D, r"\bwe(?:'ve| have)? (?:chose|chosen|picked|selected|went with|gone with|decided on|settled on|opted for) (?P<value>.+?) (?:over|instead of|rather than) (?P<other>.+?)END",
          "Chose {value} over {other}", subject="decision", about_project=True),
    _rule(D, r"\bwe(?:'ve| have)? (?:chose|chosen|went with|gone with|decided on|settled on|opted for) (?P<value>.+?)END", "Chose {value}", subject="decision", about_project=True),
    _rule(D, r"\bwe(?:'ve| have)? decided (?P<how>to|that) (?P<value>.+?)END", "Decided {how} {value}", about_project=True),
    # Lessons
    _rule(L, r"^(?P<what>.+?) (?:failed|broke|crashed|didn't work|did not work) because (?P<why>[^,;]+?)(?:[,;] *(?:so )?(?:we |you |I )?(?:need|have|must)(?: to)? (?P<need>[^,;]+?))?\s*$",
          "{What} failed because {why}[; need to {need}]", about_project=True),
    _rule(L, r"^(?:lesson learned|lesson|note to self|TIL|it turns out|turns out)[:,]? (?:that )?(?P<value>.+?)\s*$", "{Value}", about_project=True),
    _rule(L, r"^(?P<what>.+?) only works (?P<how>if|when|after|with) (?P<value>.+?)END", "{What} only works {how} {value}", about_project=True),
    _rule(L, r"\b(?:you|we) (?:need|have|must) to (?P<need>.+?) before (?P<value>.+?)END", "Need to {need} before {value}", about_project=True),
    # Goals
    _rule(G, r"\bI(?:'m| am)? (?:plan|planning|intend|intending|aim|aiming) to (?P<value>.+?)END", "Plans to {value}"),
    _rule(G, r"\bwe(?:'re| are)? (?:plan|planning|intend|intending|aim|aiming) to (?P<value>.+?)END", "The project plans to {value}", about_project=True),
    _rule(G, r"\bmy goal is (?:to )?(?P<value>.+?)END", "Goal: {value}"),
    _rule(G, r"\bour goal is (?:to )?(?P<value>.+?)END", "Project goal: {value}", about_project=True),
    _rule(G, r"\bI want to (?P<verb>learn|master|get better at) (?P<value>.+?)END", "Wants to {verb} {value}"),
    # Preferences (Chinese)
    _rule(P, r"我(?:比较|更|很|一直|通常|平时)?(?P<verb>喜欢|偏好|偏爱|倾向于?)(?P<value>.+?)(?:(?:而不是|而非|胜过|多过)(?P<other>.+?))?CJK$",
          "{verb}{value}[而不是{other}]", subject="preference"),
    _rule(P, r"我?(?:习惯|惯于|一般都|总是|一直)(?:用|使用)(?P<value>.+?)CJK$", "习惯用{value}", subject="preference"),
    _rule(P, r"^(?:请|以后|今后|永远|千万|一律)?(?:不要|别|禁止|不许)再?(?P<verb>用|使用|加|写|添加|给我)(?P<value>.+?)CJK$",
          "不要{verb}{value}", subject="preference", negative=True),
    _rule(P, r"我(?:不喜欢|讨厌|不想用)(?P<value>.+?)CJK$", "不喜欢{value}", subject="preference", negative=True),
    _rule(P, r"(?:请|以后|今后)?(?:用|使用)(?P<value>中文|英文|英语)(?:回答|回复|交流)", "偏好用{value}回答", subject="preference"),
    _rule(P, r"^我(?:现在|已经)?(?:改用|换成|换用|切换到)了?(?P<value>.+?)CJK$", "现在改用{value}", subject="preference"),
    # Facts about the user (Chinese)
    _rule(F, r"我是(?:一名|一个|一位|个)?(?P<value>[\u4e00-\u9fffA-Za-z ]{0,10}?(?:工程师|开发者|程序员|设计师|经理|学生|研究员|测量员|架构师|老师|教师|分析师))",
          "是{value}", subject="user:role", fixed=True),
    _rule(F, r"我在(?P<value>[\u4e00-\u9fffA-Za-z0-9 ]{2,20}?)(?:工作|上班|任职)", "在{value}工作", subject="user:employer", fixed=True),
    _rule(F, r"我叫(?P<value>[\u4e00-\u9fffA-Za-z]{1,10})", "名字是{value}", subject="user:name", fixed=True),
    _rule(F, r"我(?:住在|生活在)(?P<value>[\u4e00-\u9fff]{2,10})", "住在{value}", subject="user:location", fixed=True),
    # Facts about the project (Chinese)
    _rule(F, r"(?:这个|我们的|本|该)?(?P<noun>项目|系统|应用|服务|代码库|仓库)(?P<verb>使用|用的是|采用|基于|依赖|运行在|部署在)了?(?P<value>.+?)CJK$",
          "{noun}{verb}{value}", subject="project", about_project=True),
    _rule(F, r"^我们(?:现在|已经)?(?:从(?P<other>.+?))?(?:改用|换成|切换到|迁移到)了?(?P<value>.+?)CJK$", "项目改用{value}", subject="project", about_project=True),
    _rule(F, r"^我们(?:的项目)?(?:一直)?(?:使用|用的是|采用|用)(?P<value>.+?)CJK$", "项目使用{value}", subject="project", about_project=True),
    # Decisions (Chinese)
    _rule(D, r"(?:我们)?(?:最终|最后)?(?:决定|选择了?|选定了?|选用了?)(?:用|使用|采用)?(?P<value>.+?)(?:而不是|而非|，?不用|，?放弃了?)(?P<other>.+?)CJK$",
          "选择{value}而不是{other}", subject="decision", about_project=True),
    _rule(D, r"我们(?:最终|最后|已经)?决定(?:了)?(?P<value>.+?)CJK$", "决定{value}", about_project=True),
    # Lessons (Chinese)
    _rule(L, r"^(?P<what>.+?)(?:失败|报错|出错|崩溃|不工作)了?[，,]?(?:是)?因为(?P<why>[^，,；;]+)(?:[，,；;](?:所以)?(?:需要|必须|要)(?P<need>.+?))?$",
          "{what}失败是因为{why}[，需要{need}]", about_project=True),
    _rule(L, r"(?:必须|需要|得)先?(?P<need>.+?)才能(?P<value>.+?)CJK$", "需要{need}才能{value}", about_project=True),
    _rule(L, r"^(?:教训|经验|注意)(?:是)?[:：]\s*(?P<value>.+)$", "{value}", about_project=True),
    # Goals (Chinese)
    _rule(G, r"^我(?:计划|打算)(?P<value>.{2,}?)CJK$", "计划{value}"),
    _rule(G, r"^我们(?:计划|打算)(?P<value>.{2,}?)CJK$", "项目计划{value}", about_project=True),
    _rule(G, r"(?P<who>我|我们)的目标是(?P<value>.+?)CJK$", "目标是{value}"),
]  # fmt: skip

_OPTIONAL = re.compile(r"\[([^\]]*)\]")
_FIELD = re.compile(r"\{(\w+)\}")


def sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_BREAK.split(text) if part and part.strip()]


def _is_statement(sentence: str) -> bool:
    if sentence.endswith(("?", "？")) or sentence.rstrip("。.!！").endswith(("吗", "呢")):
        return False
    return not (_QUESTION_START.match(sentence) or _HYPOTHETICAL_START.match(sentence))


def clean_value(value: str) -> str:
    value = value.strip().strip(" \"'“”‘’`.。!！")
    previous = None
    while previous != value:
        previous, value = value, _TRAILING_WORDS.sub("", value).strip()
    return value


def _meaningful(value: str) -> bool:
    if len(value) < 2 and not (value and not value.isascii()):
        return False
    if value.lower() in _EMPTY_VALUES:
        return False
    return not value.startswith(_EMPTY_CJK_PREFIXES)


def _fill(template: str, groups: dict[str, str]) -> str:
    def optional(match: re.Match[str]) -> str:
        names = _FIELD.findall(match.group(1))
        return match.group(1) if all(groups.get(name.lower()) for name in names) else ""

    def field(match: re.Match[str]) -> str:
        name = match.group(1)
        value = groups.get(name.lower(), "")
        return value[:1].upper() + value[1:] if name[0].isupper() else value

    return _spaced(_FIELD.sub(field, _OPTIONAL.sub(optional, template)))


_CJK_THEN_LATIN = re.compile(r"([\u4e00-\u9fff])([A-Za-z0-9])")
_LATIN_THEN_CJK = re.compile(r"([A-Za-z0-9])([\u4e00-\u9fff])")


def _spaced(text: str) -> str:
    """A space between Chinese and Latin words, as Chinese typography sets them."""
    return _LATIN_THEN_CJK.sub(r"\1 \2", _CJK_THEN_LATIN.sub(r"\1 \2", text))


def normalise(value: str) -> str:
    value = re.sub(r"^(?:the|a|an|to use|using|to)\s+", "", value.lower().strip())
    return re.sub(r"\s+", " ", value)[:100]


def subject_and_value(rule: Rule, groups: dict[str, str]) -> tuple[str, str]:
    """What the statement is about, and what it says about it (see Rule)."""
    if not rule.subject:
        return "", ""
    value = groups.get("value", "")
    if rule.fixed:
        subject = rule.subject + (normalise(groups["what"]) if rule.subject.endswith(":") else "")
        return subject, normalise(value)
    topic = find_topic(value) or find_topic(groups.get("other") or "")
    if topic is not None:
        subject, said = f"{rule.subject}:{topic[0]}", topic[1]
        # "X over Y" says X even when only Y is a known name.
        if find_topic(value) is None:
            said = normalise(value)
    elif "what" in groups:
        subject, said = f"{rule.subject}:{normalise(groups['what'])}", normalise(value)
    else:
        subject, said = f"{rule.subject}:{normalise(value)}", normalise(value)
    if rule.negative:
        said = "not " + said
    return subject, said


def match_sentence(sentence: str) -> tuple[Rule, dict[str, str]] | None:
    """The first rule that turns this sentence into a statement, with its cleaned groups."""
    if not _is_statement(sentence):
        return None
    for rule in RULES:
        match = rule.pattern.search(sentence)
        if match is None:
            continue
        groups = {name: clean_value(text) for name, text in match.groupdict().items() if text}
        if not _meaningful(groups.get("value", "")) and "value" in rule.pattern.groupindex:
            continue
        return rule, groups
    return None


def candidate_from_sentence(
    sentence: str, *, message_ids: list[int], kind: str | None = None
) -> Candidate | None:
    found = match_sentence(sentence)
    if found is None:
        return None
    rule, groups = found
    content = _fill(rule.template, groups).strip()[:MAX_CONTENT_CHARS]
    subject, value = subject_and_value(rule, groups)
    topic = find_topic(groups.get("value", "")) or find_topic(groups.get("other", ""))
    return Candidate(
        kind=kind or rule.kind,
        content=content,
        message_ids=message_ids,
        quote=sentence,
        tags=[topic[0]] if topic else [],
        confidence=settings.MEMORY_DEFAULT_CONFIDENCE,
        subject=subject,
        value=value,
        about_project=rule.about_project,
    )


class RulesExtractor:
    name = "rules"

    def extract(self, messages: list[WindowMessage], summary: str = "") -> list[Candidate]:
        candidates: list[Candidate] = []
        for message in messages:
            if message.role != "user":
                continue
            for sentence in sentences(message.content):
                candidate = candidate_from_sentence(sentence, message_ids=[message.id])
                if candidate is not None:
                    candidates.append(candidate)
        candidates.extend(summary_candidates(summary))
        return candidates


def summary_candidates(summary: str) -> list[Candidate]:
    """One candidate per summary item, of its section's kind.

    An item the sentence rules understand keeps their wording and subject (so
    "The project uses CGCS2000" in Discoveries can supersede "uses WGS84");
    any other item is kept as written.
    """
    candidates = []
    for kind, item in summary_items(summary):
        candidate = candidate_from_sentence(item, message_ids=[], kind=kind) or Candidate(
            kind=kind,
            content=item,
            message_ids=[],
            quote=item,
            confidence=settings.MEMORY_DEFAULT_CONFIDENCE,
        )
        candidate.about_project = True
        candidates.append(candidate)
    return candidates
