"""What becomes a memory: the one gate, with its reasons.

A memory is also never something its owner said they never want remembered: a topic or a
word of their "Don't remember" list (``never_remember_rule``), whichever way it comes in.

A memory is something true and useful later: a fact, preference, decision, goal, lesson or
pattern (docs/MEMORY_KINDS.md). Talk is not: a question, a hypothetical, a greeting or a
reaction to what the other said, a fragment of a few words with nothing checkable in it, a
shared picture, a plan as it stood before it changed, or a report of a one-off problem (the lesson learned from it is a memory; the
failure itself is not). ``rejection`` says which of these a statement is, or "" when it may be
kept; extraction asks it of every candidate, whichever extractor proposed it (the rules'
own sentences and an LLM's answer alike).
"""

from __future__ import annotations

import re

from core.cjk import has_cjk

REASON_QUESTION = "question"
REASON_HYPOTHETICAL = "hypothetical"
REASON_SMALL_TALK = "small talk"
REASON_FRAGMENT = "fragment"
REASON_MEDIA = "shared media"
REASON_ONE_OFF_PROBLEM = "one-off problem"
REASON_TASK = "a task asked of the assistant"
REASON_FORMER_PLAN = "a plan given up"
REASON_NEVER_REMEMBER = "on the owner's don't-remember list"


# A question, with or without its mark: "…会不会太贵了", "演技如何".
_QUESTION = re.compile(
    r"[?？]\s*$|[吗呢][。.!！]?\s*$"
    r"|^[^，,。；;]*(?:会不会|是不是|要不要|能不能|可不可以|有没有|好不好|对不对|行不行)[^，,。；;]{0,12}"
    r"[了呀啊]?[。.!！]?\s*$"
    r"|(?:如何|怎么样|怎么办|咋办|为什么|为啥)[。.!！]?\s*$"
)
_HYPOTHETICAL = re.compile(
    r"^(?:if|suppose|supposing|imagine|assuming|what if|in case|如果|假如|假设|要是|万一)"
    # After a short lead-in: "有时候我也会想，如果哪天开第二家店…", "Honestly, if it ever got big…".
    r"|^[^，,.;]{0,12}[，,]\s*(?:if|如果|假如|要是|万一)",
    re.IGNORECASE,
)
# A guess: "应该稳了吧", "probably fine, I guess".
_GUESS = re.compile(
    r"(?:应该|可能|大概|估计)[^。！!]{0,20}吧[。.!！]?\s*$|\bI guess[.!]?\s*$", re.IGNORECASE
)
# Greetings, thanks, wishes and goodbyes; laughter; the weather.
SMALL_TALK = re.compile(
    r"\b(?:weather|how are you|how's it going|nice to meet|good (?:morning|night|evening))\b"
    r"|天气|下雨|你好|早上好|晚安|在吗|先到这|谢谢|知道啦|^哈哈|(?:生日|新年|节日|中秋|国庆|春节)快乐"
    r"|(?:我)?记下了[。！!]?$|先这样吧?[。！!]?$"
    # Putting it off: "I'll think about it", 我考虑一下.
    r"|^(?:我)?(?:考虑一下|想想|再想想|再说吧?|回头再说)[。！!]?$"
    r"|^(?:I'll think about it|maybe later|let me think(?: about it)?)\b"
    r"|^(?:hi|hello|hey|thanks|thank you|cheers|bye|see you|take care|welcome|miss you|"
    r"love you|hugs|haha|lol|merry christmas|happy (?:birthday|new year|holidays|christmas|"
    r"easter|friday|weekend)|glad (?:you|to hear|it)|good (?:luck|job|point|call|question))\b"
    r"|^(?:感谢|多谢|恭喜|祝你|祝您|生日快乐|新年快乐|拜拜|再见|回头聊|早安|辛苦了?|加油)",
    re.IGNORECASE,
)
# Reactions to what the other said ("That's awesome!", "So true", "真不错！").
REACTION = re.compile(
    r"^(?:that(?:'s| is| was| sounds| looks| must be)|this is|sounds|looks|what an?|how (?:cool|"
    r"nice|lovely|exciting|fun|awful|sad|great)|so (?:true|cool|good|fun|funny)|such an?|totally|"
    r"exactly|absolutely|definitely|true|same|me too|aww+|omg|yay|nice|great|awesome|amazing|"
    r"cool|lovely|brilliant|perfect|fair|ha+|ugh|oh no|poor|good for (?:you|her|him|them)|no way|"
    r"love (?:that|it|this)|lucky (?:you|thing)|you(?:'re| are| must| should| know| have| did)?|"
    r"finished|done|noted|got it|agreed|understood|right|sure|fine|okay|ok)\b"
    r"|^(?:真(?:不错|好|棒|厉害|羡慕)|太(?:好|棒|厉害|可爱|惨|酷)了|好(?:厉害|羡慕|可爱|棒|吧)|"
    r"厉害|羡慕|可怜|不错|确实|对啊|天哪|我的天|哇|没事|别担心|放心|算了|好的|行吧)",
    re.IGNORECASE,
)
# Feelings for the listener ("I'm so glad you had fun").
FEELING_FOR_LISTENER = re.compile(
    r"\bI(?:'m| am)(?: so| really| very| just)? (?:glad|happy|sorry|proud|jealous|thrilled|"
    r"excited|impressed)\b.*\b(?:you|to hear)\b|替你|为你",
    re.IGNORECASE,
)
# Remarks on the other's news ("5 years is a long time!").
REMARK = re.compile(
    r"^[^,，;；]*\b(?:is|are|was|sounds|looks)(?: still| so| such| really| very| pretty| quite)*"
    r" (?:a |an )?(?:long time|big deal|amazing|awesome|great|lovely|brilliant|cool|fun|hilarious|"
    r"impressive|incredible|wild|crazy|insane|ridiculous|scary|exciting|adorable|cute|huge|"
    r"massive|tough|rough)\b[^,，;；]*!+$",
    re.IGNORECASE,
)
# What the speaker says of themselves or a day: a reaction that goes on with one is a fact.
_SUBSTANCE = re.compile(
    r"\d|(?-i:\bI\b)|\b(?:I'm|I've|my|we|our|they|their)\b|我",
    re.IGNORECASE,
)
# Asking the assistant to do something now ("Help me list …", "帮我把下面这段改写一下"), or
# taking back what was just said ("Scratch that", "算了"): the conversation, not a memory.
_TASK = re.compile(
    r"^(?:please |ok(?:ay)?,? |so,? )?(?:help me|can you|could you|would you|let's (?:write|do|make|"
    r"start|go through)|scratch (?:that|the)|never ?mind|forget (?:that|what I said))\b"
    r"|^(?:请|麻烦)?(?:你)?(?:帮我|帮忙|麻烦你)|^(?:算了|不用了|先这样)",
    re.IGNORECASE,
)
_MEDIA = re.compile(
    r"^\s*\[(?:shares?|sent|sends|image|photo|picture|video|sticker|attachment|图片|照片|视频|表情)",
    re.IGNORECASE,
)
# A one-off problem: something failed, broke, was late or lost, once.
_PROBLEM = re.compile(
    r"\b(?:failed|fails|failing|crashed|died|broke|broken|went down|took [\w -]{1,30} down|"
    r"outage|timed out|timeout|errored|went wrong|missed (?:our|my|the|a)|left late|"
    r"(?:was|were|is|got) (?:late|delayed|cancelled|canceled)|"
    r"(?:keeps?|kept) (?:losing|dropping|crashing|breaking|freezing|timing out)|"
    r"lost (?:\w+ ){0,3}(?:work|data|files?|money|progress|connection|everything))\b"
    r"|失败|报错|出错|丢失|出了事故|事故|崩溃|宕机|挂了|超时|坏了|丢了|亏了|晚了|(?<!推)迟到|没(?:写|做|跑|弄|改)完|错过|蓝屏|死机|卡死|掉线|没(?:交|赶)上"
    r"|(?:连|打|登|下|用|跑|装)不(?:上|开|了|起来)|被(?:封|禁|限流|屏蔽|盗)",
    re.IGNORECASE,
)
# A plan as it stood before it changed ("We were going to stay in Lisbon the whole time",
# 本来打算自己做): what replaced it is the memory.
_FORMER_PLAN = re.compile(
    r"\b(?:was|were) (?:going to|gonna|planning to|planning on)\b|\b(?:had|originally) planned\b"
    r"|(?:本来|原本|原来|之前)(?:是)?(?:打算|想|准备|计划)",
    re.IGNORECASE,
)
# A problem told with what to do about it is a lesson, not a report.
_LESSON_WORDS = re.compile(
    r"\b(?:lesson|learned|learnt|need to|have to|must|always|never|should|only works|turns out)\b"
    r"|教训|经验|需要|必须|一定要|以后|总结",
    re.IGNORECASE,
)


_ENDS_ON_PRONOUN = re.compile(r"\b(?:it|them|that|this|those|these|one)[.!]?$", re.IGNORECASE)


def _is_fragment(text: str) -> bool:
    """A few words with nothing checkable in them ("Finished", "Had and how much", "Has had
    them")."""
    if has_cjk(text):
        return len(re.sub(r"\W", "", text)) < 4
    words = re.findall(r"[\w'’-]+", text)
    return len(words) <= 1 or (len(words) <= 3 and bool(_ENDS_ON_PRONOUN.search(text)))


def is_small_talk(text: str) -> bool:
    """Talk rather than a fact about anyone: a greeting, thanks, a reaction or a remark with
    nothing said of the speaker or a day ("Same, I start on Monday" is a fact)."""
    text = text.strip()
    if SMALL_TALK.search(text) or FEELING_FOR_LISTENER.search(text):
        return True
    return bool(REACTION.match(text) or REMARK.match(text)) and not _SUBSTANCE.search(text)


def rejection(kind: str, content: str) -> str:
    """Why a statement of ``kind`` is not a memory (a REASON_ constant), or "" if it may be."""
    text = content.strip()
    if _MEDIA.match(text):
        return REASON_MEDIA
    if _QUESTION.search(text):
        return REASON_QUESTION
    if _HYPOTHETICAL.match(text) or _GUESS.search(text):
        return REASON_HYPOTHETICAL
    if _TASK.match(text):
        return REASON_TASK
    if is_small_talk(text):
        return REASON_SMALL_TALK
    if _is_fragment(text):
        return REASON_FRAGMENT
    if kind != "lesson" and _PROBLEM.search(text) and not _LESSON_WORDS.search(text):
        return REASON_ONE_OFF_PROBLEM
    if kind != "lesson" and _FORMER_PLAN.search(text):
        return REASON_FORMER_PLAN
    return ""


# Topics a "Don't remember" line may name, with the words that speak of them.
_TOPICS: dict[str, re.Pattern[str]] = {
    topic: re.compile(words, re.IGNORECASE)
    for topics, words in [
        (
            ("health", "健康", "medical", "医疗"),
            r"\b(?:health|doctor|GP|hospital|clinic|diagnos\w*|allerg\w*|migraines?|asthma|"
            r"diabetes|medication|medicine|pills?|therapy|therapist|surgery|pregnan\w*|illness|"
            r"sick|injur\w*|symptoms?|blood pressure|cancer|depression|anxiety)\b"
            r"|健康|医生|医院|门诊|诊断|过敏|偏头痛|哮喘|糖尿病|吃药|药物|治疗|手术|怀孕|生病|症状|血压|抑郁|焦虑",
        ),
        (
            ("work", "job", "工作"),
            r"\b(?:work|works|working|job|office|employer|boss|manager|colleagues?|coworkers?|"
            r"salary|promotion|career)\b|工作|上班|公司|老板|同事|领导|工资|入职|辞职|加班",
        ),
        (
            ("money", "finance", "finances", "钱", "财务"),
            r"\b(?:money|salary|savings?|bank|loan|mortgage|debt|invest\w*|budget|income)\b"
            r"|钱|工资|存款|银行|贷款|房贷|理财|投资|基金|预算|收入",
        ),
    ]
    for topic in topics
}


def never_remember_rule(content: str, rules: list[str]) -> str:
    """The first of ``rules`` (topics or words) that ``content`` falls under, or "": a named
    topic (health, work, money) by the words that speak of it, any other rule as a word or
    phrase (whole words in Latin script, anywhere in Chinese)."""
    for rule in rules:
        topic = _TOPICS.get(rule.casefold())
        if topic is not None:
            if topic.search(content):
                return rule
            continue
        if has_cjk(rule):
            found = rule in content
        else:
            found = bool(re.search(rf"(?<!\w){re.escape(rule)}(?!\w)", content, re.IGNORECASE))
        if found:
            return rule
    return ""


class NeverRemember(ValueError):
    """Text its owner asked never to remember: refused rather than stored."""

    def __init__(self, rule: str):
        super().__init__(f"The text falls under the don't-remember rule {rule!r}.")
        self.rule = rule
