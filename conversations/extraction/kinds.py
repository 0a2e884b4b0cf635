"""The kind of a statement, by the definitions of docs/MEMORY_KINDS.md.

One reading for extraction (every candidate, whichever extractor proposed it) and for a
memory added by hand with "Choose for me" (``conversations.apps``). The kinds are tried in
the order their definitions take precedence: a lesson learned; a request about how answers
should look (a preference, however it is worded: "Always answer me in short bullet
points"); a goal; a pattern (something that recurs, with its frequency); a decision; a
preference; and otherwise the kind proposed (a fact by default).
"""

from __future__ import annotations

import re

from conversations.extraction.dates import RECURRING
from memories.models import Kind

_LESSON = re.compile(
    r"\b(?:lessons? learned|lesson|lessons|TIL|learned (?:that|the hard way)|learnt|note to self|"
    r"turns out|never again)\b|教训|经验是|经验：|吸取|下次(?:一定|要|得)",
    re.IGNORECASE,
)
# Asking the assistant how to answer: "keep your answers short", "when you give feedback on my
# chapters I'd rather have inline comments", "以后你就用简短的中文回答我", "写周报的时候别用表格".
_ANSWER_STYLE = re.compile(
    r"(?:^|[,;] )(?:(?:from now on|also|and|so|plus|going forward|in future),? |please |always |"
    r"never |just )*"
    r"(?:answer|reply|respond|explain|format|keep|give|"
    r"show|write|use|put|start|end|add|include|don't|do not|no)\b[^.!?]{0,80}"
    r"\b(?:me|answers?|replies|responses?|explanations?|your)\b"
    r"|\b(?:when|whenever|if) you (?:give|write|answer|reply|explain|review|help|draft|send|show|"
    r"suggest|correct|edit)\b|\byour (?:answers|replies|responses|explanations|feedback)\b"
    r"|\b(?:answer|reply|respond|talk|write) (?:to )?(?:me|them) in\b"
    r"|\byou (?:draft|write|give|send|prepare|make|produce|generate)\b[^.]{0,30}\bfor (?:me|them)\b"
    r"|^(?:另外|还有|而且)?[，,]?(?:请|以后|今后)?(?:别|不要|不用|少用|多用)(?:用|写|加|给)"
    r"|(?:统一|一律|都要|都得)(?:保留|用|写成|写)"
    r"|(?:回答|回复|答复|解释|讲解)(?:我|他们)?|给我(?:写|讲|解释|举|列|用)|帮我[^，,。]{0,16}(?:的时候|时)"
    r"|^(?:你)?(?:讲|写|解释|举例)(?:的时候|时)"
    r"|(?:以后|今后|之后)?(?:你)?(?:就)?(?:用|别用|不要用|先给)[^，,。]{0,12}(?:回答|回复|代码|格式|列表|表格)",
    re.IGNORECASE,
)
_GOAL = re.compile(
    r"\b(?:my|our) (?:goal|aim|target|plan)\b|\b(?:aim|aiming|hope|hoping|plan|planning|intend|"
    r"intending) to\b|\btraining for\b|\b(?:want|wants|would like) to (?:run|finish|pass|reach|"
    r"get|learn|read|save|lose|visit|see|go|travel|release|ship|launch|master|spend|try|build|"
    r"buy|move|start|become|write|climb|hike)\b"
    r"|\bPlans to\b|^Goal:"
    # A trip or move the speaker says they will make: "We'll spend four nights in Kyoto".
    r"|\b(?:I|we|they)(?:'ll| will) (?:definitely |probably |also |then )?(?:spend|visit|fly|travel|"
    r"stay|move|go to|drive to)\b"
    r"|目标|打算|计划|准备(?:参加|考|去|报)|争取|想(?:要)?(?:把[^，,。]{1,20}?)?(?:考|跑完|去|学完|读完|看完|过一遍)",
    re.IGNORECASE,
)
_PATTERN = re.compile(
    r"\b(?:usually|normally|typically|generally|often|routinely|habitually|every (?!one\b|thing\b|"
    r"body\b|where\b|time\b|bit\b)\w+|each (?:day|morning|evening|night|week|weekday|weekend|"
    r"month|year|payday|time)|on (?:weekdays|weekends)|routine|habit|per (?:day|week|month))\b"
    r"|每(?!次都|个人)|平时|通常|一般(?:都|会)?(?=[\u4e00-\u9fff])|经常|总是在",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:decided|decide|decision|went with|going with|settled on|opted for|we chose|chose|"
    r"let's go with|the suggestion)\b|决定|就这么定了|定了|选了|选定|采纳建议",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(?:prefer|prefers|preferred|rather|favou?rite|hate|hates|dislike|dislikes|can't stand|"
    r"fan of)\b|(?:^|\b(?:I|they|she|he|we|also|really|still|do|does|just) )(?:like|likes|love|"
    r"loves|enjoy|enjoys)\b|喜欢|偏好|偏爱|更爱|宁愿|宁可|讨厌",
    re.IGNORECASE,
)


def is_answer_style(text: str) -> bool:
    """Whether ``text`` asks the assistant how to answer (a preference, by definition)."""
    return bool(_ANSWER_STYLE.search(text))


def kind_by_definition(text: str, proposed: str = Kind.FACT, quote: str = "") -> str:
    """The kind ``text`` states (docs/MEMORY_KINDS.md); ``proposed`` when it says none. A
    preference read from a ``quote`` that asks how to answer stays one, however its rewrite
    reads."""
    if _LESSON.search(text) or proposed == Kind.LESSON:
        return Kind.LESSON
    if _ANSWER_STYLE.search(text) or (proposed == Kind.PREFERENCE and is_answer_style(quote)):
        return Kind.PREFERENCE
    if _GOAL.search(text):
        return Kind.GOAL
    if RECURRING.search(text) or _PATTERN.search(text):
        return Kind.PATTERN
    if _DECISION.search(text) or proposed == Kind.DECISION:
        return Kind.DECISION
    if _PREFERENCE.search(text) or proposed == Kind.PREFERENCE:
        return Kind.PREFERENCE
    return proposed if proposed in Kind.values else Kind.FACT
