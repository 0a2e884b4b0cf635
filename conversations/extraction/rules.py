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
from dataclasses import dataclass, replace
from datetime import date, datetime

from django.conf import settings

from conversations.extraction import Candidate, WindowMessage
from conversations.extraction.dates import DAY, MONTH, Dated, chinese, english, resolve
from conversations.extraction.kinds import is_answer_style, kind_by_definition
from conversations.extraction.summary import summary_items
from conversations.extraction.topics import find_topic
from core.cjk import CJK_LETTER
from memories.gate import (
    FEELING_FOR_LISTENER,
    REACTION,
    REASON_FORMER_PLAN,
    REASON_ONE_OFF_PROBLEM,
    REMARK,
    SMALL_TALK,
    rejection,
)
from memories.models import Kind

# Where a value ends: punctuation, or a clause that explains rather than states.
_END = (
    r"(?=\s*(?:[,;:，；：(（]|\b(?:because|since|but|so|when|unless|although|though)\b"
    r"|,? and (?=(?-i:I)\b|I'm|I've|we\b|my\b|our\b|the\b|she\b|he\b|they\b|it's\b)"
    r"|\s+(?:-|–|—)\s+|[.!?](?:\s|$)|因为|但是|所以|$))"
)
_CJK_END = r"(?=[，,；;：:（(]|因为|但是|所以|不过|$)"
_CJK = CJK_LETTER  # What counts as CJK: core.cjk.
_NAME = r"(?-i:[A-Z])[\w&.-]*(?: (?-i:[A-Z])[\w&.-]*)*"
_REL = (
    r"(?:(?:older |younger |big |little |baby |twin |best |oldest |youngest )?"
    r"(?:sister|brother|mum|mom|mother|dad|father|parents|husband|wife|partner|boyfriend|"
    r"girlfriend|fianc[ée]e?|son|daughter|kids?|children|child|baby|grandma|grandmother|grandpa|"
    r"grandfather|gran|nan|aunt|auntie|uncle|cousin|niece|nephew|friend|mate|flatmate|roommate|"
    r"housemate|neighbour|neighbor|boss|manager|colleague|coworker|co-worker|in-laws|"
    r"(?:mother|father|sister|brother)-in-law|stepmum|stepmom|stepdad|dog|cat|puppy|kitten|"
    r"supervisor|mentor|agent|editor|landlord|landlady|team|teammate))"
)
# Past-tense verbs that tell an event ("I went", "I finished"), not a thought ("I guessed").
_CJK_REL = (
    r"(?:女儿|儿子|老公|老婆|丈夫|妻子|爱人|男朋友|女朋友|男友|女友|对象|未婚夫|未婚妻|妈妈?|爸爸?|父母|爸妈|"
    r"爷爷|奶奶|外婆|外公|姥姥|姥爷|哥哥?|姐姐?|弟弟?|妹妹?|表哥|表姐|表弟|表妹|堂哥|堂姐|堂弟|堂妹|室友|"
    r"同事|朋友|闺蜜|老板|领导|导师|孩子|宝宝|师兄|师姐|师弟|师妹|舅舅|姑姑|阿姨|叔叔|家狗|狗|猫)"
)
_PAST = (
    r"(?:went|visited|finished|started|began|got|bought|sold|adopted|joined|quit|left|moved|signed|"
    r"booked|ordered|ran|did|made|took|had|met|saw|won|lost|passed|failed|completed|attended|"
    r"spent|tried|found|gave|sent|wrote|read|drove|flew|rode|swam|cycled|hiked|climbed|cooked|"
    r"baked|built|broke|hurt|sprained|fell|paid|received|accepted|handed|applied|registered|"
    r"enrolled|graduated|retired|resigned|launched|released|published|self-published|"
    r"submitted|rewrote|renamed|changed|switched|upgraded|installed|fixed|deployed|shipped|"
    r"painted|planted|renovated|rented|leased|borrowed|lent|picked|signed up|came back|"
    r"got back|set up|gave up|took up|ate|drank|slept|woke|celebrated|married|proposed|"
    r"divorced|split|emailed|called|rang|texted|told|asked for|promised|offered|saw|heard|learned|learnt|"
    r"bumped|turned|decided|managed|ended|stopped|cut|dropped|added|removed|replaced|lived|worked|"
    r"studied|trained|practised|practiced|played|watched|organised|organized|hosted|ordered)"
)

_PAST_WORDS = frozenset(re.findall(r"[a-z]+", _PAST))
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_LEADING_JUNK = re.compile(r"^(?:[\s\-–—•*·>#\"'“”‘’`:：,，.。]+|\d{1,2}[.)]\s+|\d{1,2}、)+")
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
# Where one clause of a compound sentence ends and another, with its own subject, begins.
_CLAUSE_BREAK = re.compile(
    r"\s*;\s*|,? and (?=(?:when|whenever|if|I|I'm|I've|we|my|our)\b)|；", re.IGNORECASE
)
# The tag of a request about how answers should look.
ANSWERS = "answers"


@dataclass(frozen=True)
class Rule:
    """One sentence pattern and what it becomes.

    ``template`` is filled from the pattern's named groups; a part in square
    brackets is kept only when every group it names matched. ``subject`` is
    the family of the statement ("preference", "project", "user:role"); with
    ``fixed`` it is the whole subject, otherwise the value's topic (or the
    value itself) completes it. ``negative`` statements ("never use X") have
    the opposite value of positive ones, so they contradict each other.
    ``check`` names a test the value must pass ("place": not a well-known
    tool; "personal"/"technical": whether a plan is about the work).
    ``possessive`` statements start with a noun ("Sister Lucía ..."), so
    another speaker's name goes before them as "Mia's sister ...". A value that
    ``replaces`` another ("switched from X to Y") is about what X was about, so
    it supersedes what was said of X.
    """

    kind: str
    pattern: re.Pattern[str]
    template: str
    subject: str = ""
    fixed: bool = False
    negative: bool = False
    about_project: bool = False
    check: str = ""
    possessive: bool = False
    replaces: bool = False


def _rule(kind: str, pattern: str, template: str, **options: object) -> Rule:
    pattern = pattern.replace("{_NAME}", _NAME).replace("{_REL}", _REL).replace("{_PAST}", _PAST)
    pattern = pattern.replace("{_CJK_REL}", _CJK_REL)
    compiled = re.compile(pattern.replace("END", _END).replace("CJK$", _CJK_END), re.IGNORECASE)
    return Rule(kind, compiled, template, **options)  # type: ignore[arg-type]


P, F, D, L, G = Kind.PREFERENCE, Kind.FACT, Kind.DECISION, Kind.LESSON, Kind.GOAL

RULES: list[Rule] = [
    # Preferences (English)
    _rule(P, r"\bI(?: really| strongly| much| generally| usually| now)? prefer (?P<value>.+?)(?: (?:over|rather than|instead of) (?P<other>.+?))?END",
          "Prefers {value}[ over {other}]", subject="preference"),
    _rule(P, r"\b(?:I |please )?always (?P<verb>use|write|run|add|format|put) (?P<value>.+?)END", "Always {verb} {value}", subject="preference"),
    _rule(P, r"\b(?:I |please )?never (?P<verb>use|write|run|add|put) (?P<value>.+?)END", "Never {verb} {value}", subject="preference", negative=True),
    _rule(P, r"\bI (?:don't|do not) (?:like|want to use|use) (?P<value>.+?)END", "Does not like {value}", subject="preference", negative=True),
    _rule(P, r"^(?:please )?(?:don't|do not) (?P<verb>use|add|write|include|put) (?P<value>.+?)END", "Do not {verb} {value}", subject="preference", negative=True),
    _rule(P, r"\bmy (?:favou?rite|preferred|go-to) (?P<what>[\w .+#-]{2,30}?) is (?P<value>.+?)END", "Favourite {what} is {value}", subject="preference"),
    _rule(P, r"\b(?:reply|respond|answer|write|talk)(?: to me)? in (?P<value>English|Chinese|Mandarin)\b", "Prefers replies in {value}", subject="preference"),
    # Facts about the user
    _rule(F, r"\bI(?:'m| am)(?: now| currently)? (?P<article>a|an|the) (?P<value>(?:[\w-]+ ){0,3}?(?:engineer|developer|programmer|designer|manager|scientist|student|researcher|analyst|surveyor|architect|teacher|consultant|writer|nurse|doctor|librarian|electrician|chef|cook|lawyer|accountant|mechanic|physio|physiotherapist|pharmacist|vet|officer|firefighter|baker|artist|photographer|musician|journalist|editor|translator|driver|pilot|plumber|carpenter|farmer|florist|lead|director|founder|owner|intern|assistant|lecturer|professor|midwife|paramedic|dentist|therapist|cleaner|barista|waiter|waitress|coach|trainer|mum|mom|dad|freelancer|retiree|novelist|author)s?)(?: (?:at|for|in) (?P<at>{_NAME}))?\b",
          "Is {article} {value}[ at {at}]", subject="user:role", fixed=True),
    _rule(F, r"\bI work as (?P<article>a|an|the) (?P<value>(?:[\w-]+ ){0,3}?[\w-]+?)(?: (?:at|for) (?P<at>{_NAME}))?END",
          "Works as {article} {value}[ at {at}]", subject="user:role", fixed=True),
    _rule(F, r"\bI(?:'ve| have)? (?:just |finally |officially )?(?P<verb>got|landed|accepted|took|started) (?:(?P<article>a|an|the|my) )?(?:new |first )?(?P<what>job|position|role|offer|internship)(?: as (?:a |an )?(?P<role>[\w -]+?))? (?P<prep>at|with|from) (?P<value>{_NAME})",
          "{Verb}[ {article}] {what}[ as {role}] {prep} {value}", subject="user:employer", fixed=True),
    _rule(F, r"\b(?:I (?:now |currently |still )?|(?:and|but) (?:I )?now )work (?:at|for) (?P<value>{_NAME})", "Works at {value}",
          subject="user:employer", fixed=True),
    _rule(F, r"\bI(?:'ve| have)? (?:just )?started(?: work| working)? at (?P<value>{_NAME})", "Started at {value}",
          subject="user:employer", fixed=True),
    _rule(F, r"\bI(?:'m| am)? (?:start|starting)(?: work| working)? at (?P<value>{_NAME})", "Starts at {value}",
          subject="user:employer", fixed=True),
    _rule(F, r"\bI(?:'m| am)(?: now| officially)? (?P<value>single|engaged|married|divorced|separated|widowed)\b", "Is {value}",
          subject="user:relationship", fixed=True),
    _rule(F, r"\b(?:I|we)(?:'ve| have)? (?:just |finally |officially )?got (?P<value>engaged|married|divorced)\b", "Got {value}",
          subject="user:relationship", fixed=True),
    _rule(F, r"\b(?:I|we)(?:'ve| have)? (?:just )?(?P<value>split up|broken up|broke up)\b(?: with (?P<name>(?-i:[A-Z])[\w-]+))?",
          "{Value}[ with {name}]", subject="user:relationship", fixed=True),
    _rule(F, r"\bmy name is (?P<value>(?-i:[A-Z])\w+)", "Name is {value}", subject="user:name", fixed=True),
    _rule(F, r"\b(?:I|we)(?:'ve| have)? (?:just |recently |finally )?(?:moved|relocated) to (?P<value>{_NAME})", "Moved to {value}",
          subject="user:location", fixed=True, check="place"),
    _rule(F, r"\b(?:I|we)(?:'m| am|'re| are)? (?:moving|relocating) (?:from (?P<other>{_NAME}) )?to (?P<value>{_NAME})", "Moving to {value}[ from {other}]",
          subject="user:location", fixed=True, check="place"),
    _rule(F, r"\bI (?:usually |normally |always |now |still |mostly )?(?P<verb>take|ride|drive|cycle|bike|walk)(?P<rest>[^,.;]{0,30}? to (?:work|the office))\b", "{Verb}s {rest}",
          subject="user:commute", fixed=True),
    _rule(F, r"\bI (?:live|am based|'m based|am living|'m living) in (?P<value>{_NAME})", "Lives in {value}", subject="user:location", fixed=True, check="place"),
    _rule(F, r"\bI(?:'m| am) (?:originally )?from (?P<value>{_NAME})", "Is from {value}", subject="user:origin", fixed=True, check="place"),
    _rule(F, r"\bI grew up in (?P<value>{_NAME})", "Grew up in {value}", subject="user:origin", fixed=True, check="place"),
    _rule(P, r"\bI(?:'ve| have)? (?:switched|moved|changed|gone back|went back) (?:from (?P<other>.+?) )?to (?P<value>.+?)END", "Now uses {value}[ instead of {other}]",
          subject="preference", replaces=True),
    _rule(F, r"\bmy (?P<what>time ?zone|native language|first language|mother tongue) is (?P<value>.+?)END", "{What} is {value}", subject="user:", fixed=True),
    # Health
    _rule(F, r"\bI(?:'m| am) (?:severely |very |really |quite |a bit )?allergic to (?P<value>.+?)END", "Allergic to {value}", subject="allergy"),
    _rule(F, r"\bmy (?P<value>[\w -]{2,20}?) allergy\b", "Has a {value} allergy", subject="allergy"),
    _rule(F, r"\bI (?:can't|cannot|can not|shouldn't|mustn't|am not allowed to) (?P<verb>eat|drink|have) (?P<value>.+?)END", "Cannot {verb} {value}", subject="diet", negative=True),
    _rule(F, r"\bI(?:'m| am|'ve been| have been| went| became| turned)(?: now| fully)? (?P<value>vegetarian|vegan|pescatarian|gluten-free|lactose intolerant|diabetic|pregnant|sober|teetotal|caffeine-free|dairy-free)\b",
          "Is {value}", subject="diet"),
    _rule(F, r"\bI (?:get|suffer from|have|'ve got|have got|was diagnosed with) (?P<value>migraines?|asthma|diabetes|arthritis|RSI|anxiety|depression|insomnia|eczema|back pain|hay ?fever|(?:[\w-]+ ){0,2}(?:syndrome|disease|disorder|injury|pain|itis))\b",
          "Has {value}", subject="health"),
    _rule(F, r"\bI (?:always |often |usually )?(?:get|feel) (?P<value>(?:motion|car|sea|travel|altitude)[ -]?sick(?:ness)?(?: on [\w ]{2,20}?)?)END", "Gets {value}", subject="health"),
    _rule(F, r"\b(?:the |my )?(?P<who>doctor|GP|physio(?:therapist)?|dentist|consultant|specialist|surgeon|optician|therapist)(?: \w+)? (?P<verb>says|said|thinks|told me|recommended|reckons|diagnosed)(?: that)? (?P<value>.+?)END",
          "{Who} {verb} {value}"),
    # Relationships and pets
    _rule(F, r"\bmy (?P<rel>{_REL})(?:,? (?P<name>(?-i:[A-Z])[\w'-]+),?)?(?P<rest> (?!(?:prefers|thinks|said|says)\b)(?:is|was|has|had|works|lives|got|just|also|moved|started|can't|doesn't|didn't|will|(?:[a-z]+ed)|(?:[a-z]{3,}s))\b.*?)END",
          "{Rel}[ {name}] {rest}", possessive=True),
    _rule(F, r"\bI have (?P<value>(?:a|an|one|two|three|four|five|\d) (?:(?:little|older|younger|big|baby|twin|teenage|grown-up|new) )?(?:sisters?|brothers?|kids|children|sons?|daughters?|child|grandchildren|dogs?|cats?|pets?|rabbits?|hamsters?|birds?|horses?))(?: (?:named|called) (?P<name>(?-i:[A-Z])[\w-]+(?:(?:,| and) (?!I\b)(?-i:[A-Z])[\w-]+)*))?",
          "Has {value}[ named {name}]"),
    _rule(F, r"\bI(?:'ve| have)? (?:just |finally )?(?P<verb>adopted|got|bought|rescued) (?P<article>a|an) (?P<value>(?:[\w-]+ ){0,3}?(?:dog|cat|puppy|kitten|rabbit|hamster|parrot|horse|lurcher|labrador|terrier|spaniel|corgi|pet))(?:[,!]? (?:named|called) (?P<name>(?-i:[A-Z])\w+))?",
          "{Verb} {article} {value}[ named {name}]"),
    # Facts about the project
    _rule(F, r"\b(?P<owner>the|our|this) (?P<noun>project|app|application|codebase|repo|repository|service|backend|frontend|system|website|api) (?P<verb>uses|is using|runs on|is built (?:on|with)|is written in|depends on|targets|stores (?:data|everything) in) (?P<value>.+?)END",
          "The {noun} {verb} {value}", subject="project", about_project=True),
    _rule(F, r"\bour (?P<what>(?:[\w-]+ )?(?:database|db|backend|frontend|stack|server|servers|api|cache|queue|message broker|ci|hosting|cloud|orm|monorepo|repo)) (?P<verb>is|are|runs on|run on|is on|are on|lives on|is hosted on) (?P<value>.+?)END",
          "The {what} {verb} {value}", subject="project", about_project=True),
    _rule(F, r"\bwe (?:host|keep|run) (?P<what>(?:the|our) [\w -]{2,30}?) on (?P<value>.+?)END", "The team hosts {what} on {value}", subject="project", about_project=True),
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
    # Goals and plans, and their changes
    _rule(G, r"\b(?:I(?:'m| am)?|we(?:'re| are)?) (?:actually |now |also |definitely )?(?:not (?:going|planning) to|no longer (?:going|planning) to|won't be|not gonna|never going to) (?P<value>.+?)(?: anymore| any more)?END",
          "No longer plans to {value}", subject="plan", negative=True),
    _rule(G, r"\bI(?:'m| am)? (?:still |now |also |really )?(?:plan|planning|intend|intending|aim|aiming|hoping|going|about|gonna|thinking of|thinking about) (?:to )?(?P<value>(?!be\b).+?)END", "Plans to {value}", subject="plan"),
    _rule(G, r"\bwe(?:'re| are)? (?:still |now |also )?(?:plan|planning|intend|intending|aim|aiming|hoping|going) to (?P<value>.+?)END", "Plans to {value}", subject="plan", check="personal"),
    _rule(G, r"\bwe(?:'re| are)? (?:plan|planning|intend|intending|aim|aiming|going) to (?P<value>.+?)END", "The project plans to {value}", about_project=True, check="technical"),
    _rule(D, r"\bI(?:'ve| have)? (?:finally |just |now |also )?(?:decided|made (?:a|the) (?:big )?decision)(?: to| that|:)? (?P<value>.+?)END", "Decided to {value}", subject="plan"),
    _rule(G, r"\bmy goal is (?:to )?(?P<value>.+?)END", "Goal: {value}"),
    _rule(G, r"\bour goal is (?:to )?(?P<value>.+?)END", "Project goal: {value}", about_project=True),
    _rule(G, r"\bI want to (?P<verb>learn|master|get better at) (?P<value>.+?)END", "Wants to {verb} {value}"),
    # Likes
    _rule(P, r"\bI(?: really| absolutely| just| actually| also| still| totally)? (?P<verb>love|enjoy|like|adore)(?! (?:it|that|this|them|you|to|the idea|how|what|when)\b)(?P<value> .+?)END",
          "{Verb}s {value}", subject="likes"),
    _rule(P, r"\bI(?: really| absolutely)? (?:hate|can't stand|loathe) (?P<value>.+?)END", "Dislikes {value}", subject="likes", negative=True),
    _rule(P, r"\bI(?:'m| am) (?:really |so |totally )?(?:into|obsessed with|a (?:big |huge )?fan of) (?P<value>.+?)END", "Is into {value}", subject="likes"),
    # Events, activities and durations
    _rule(F, r"\bI(?:'ve| have) been (?P<verb>\w+ing)(?P<rest> .+?)END", "Has been {verb} {rest}"),
    _rule(F, r"\bI(?:'ve| have) (?:just |finally |already |recently |also |now |officially )?(?P<verb>{_PAST}|been|gotten|done|begun|taken|written|seen|given|made|found|run|won|lost|bought|sold|got)\b(?P<rest> .+?)?END",
          "Has {verb}[ {rest}]"),
    _rule(F, r"\bI (?:just |finally |recently |also |actually |even |then |already |officially |eventually )?(?P<verb>{_PAST})\b(?P<rest> .+?)?END", "{Verb}[ {rest}]"),
    _rule(F, r"\bwe (?:just |finally |also |actually |even |then |already |officially )?(?P<verb>went|visited|bought|signed|booked|had|spent|took|drove|flew|travelled|traveled|adopted|sold|moved|got|did|met|celebrated|married|split|lost|won|finished|started|launched|sold)\b(?P<rest> .+?)?END",
          "{Verb}[ {rest}]"),
    # Preferences (Chinese)
    _rule(P, r"我(?:现在|如今|最近|还是)?(?:比较|更|很|一直|通常|平时|真的|特别|非常)*(?P<verb>喜欢|偏好|偏爱|倾向于?)(?P<value>.+?)(?:(?:而不是|而非|胜过|多过)(?P<other>.+?))?CJK$",
          "{verb}{value}[而不是{other}]", subject="preference"),
    _rule(P, r"我?(?:习惯|惯于|一般都|总是|一直)(?:用|使用)(?P<value>.+?)CJK$", "习惯用{value}", subject="preference"),
    _rule(P, r"^(?:请|以后|今后|永远|千万|一律)?(?:不要|别|禁止|不许)再?(?P<verb>用|使用|加|写|添加|给我)(?P<value>.+?)CJK$",
          "不要{verb}{value}", subject="preference", negative=True),
    _rule(P, r"我(?:不喜欢|讨厌|不想用)(?P<value>.+?)CJK$", "不喜欢{value}", subject="preference", negative=True),
    _rule(P, r"(?:请|以后|今后)?(?:用|使用)(?P<value>中文|英文|英语)(?:回答|回复|交流)", "偏好用{value}回答", subject="preference"),
    _rule(P, r"(?:^我|^|[，,])(?:现在|已经)?(?:从(?P<other>[^，,。]+?))?(?P<verb>改用|换成|换用|切换到|改喝|改吃|改骑|改坐)了?(?P<value>.+?)CJK$", "现在{verb}{value}[，不再用{other}]",
          subject="preference", replaces=True),
    # Facts about the user (Chinese)
    _rule(F, r"我是(?:一名|一个|一位|个)?(?P<value>[\u4e00-\u9fffA-Za-z ]{0,10}?(?:工程师|开发者|程序员|设计师|经理|学生|研究员|测量员|架构师|老师|教师|分析师|护士|医生|律师|会计|厨师|司机|编辑|记者|销售|班主任|公务员|研究生|博士生|本科生|研[一二三]|大[一二三四]|店主|老板|主管|组长))",
          "是{value}", subject="user:role", fixed=True),
    _rule(F, r"我(?:现在|目前|已经|还)?在(?P<value>[\u4e00-\u9fffA-Za-z0-9 ]{2,20}?)(?:工作|上班|任职)", "在{value}工作", subject="user:employer", fixed=True),
    _rule(F, r"^(?:我们?|我?(?P<partner>和[\u4e00-\u9fff]{1,4}?))(?:已经|刚|刚刚|终于)?(?P<value>订婚|结婚|离婚|分手)了", "[{partner}]{value}了",
          subject="user:relationship", fixed=True),
    _rule(F, r"我叫(?P<value>[\u4e00-\u9fffA-Za-z]{1,10})", "名字是{value}", subject="user:name", fixed=True),
    _rule(F, r"我(?:住在|生活在)(?P<value>[\u4e00-\u9fff]{2,10})", "住在{value}", subject="user:location", fixed=True),
    _rule(F, r"我(?:现在)?在(?P<value>[\u4e00-\u9fffA-Za-z0-9 ]{2,20}?)(?P<verb>读书|上学|读研|读博|念书|读)", "在{value}{verb}", subject="user:school", fixed=True),
    _rule(F, r"我(?:老家)?是(?P<value>[\u4e00-\u9fff]{2,8}?)人", "是{value}人", subject="user:origin", fixed=True),
    _rule(F, r"我老家(?:是|在)(?P<value>[\u4e00-\u9fff]{2,10})", "老家在{value}", subject="user:origin", fixed=True),
    # A date may come between the subject and the verb: 我们2026年10月已经搬到深圳了.
    _rule(F, r"我(?:们)?(?:[\d年月日号那周]{2,14})?(?:已经|刚|刚刚)?(?:搬到|搬去|搬来|搬家到)了?(?P<value>[\u4e00-\u9fff]{2,8}?)(?:了|[，,。！]|$)", "搬到{value}", subject="user:location", fixed=True),
    _rule(F, r"我的(?P<what>[\u4e00-\u9fffA-Za-z ]{1,8}?)(?:是|为|叫|用的是|采用的是|采用)(?P<value>.+?)CJK$", "{what}是{value}", subject="user:"),
    # Health (Chinese)
    _rule(F, r"我对(?P<value>.{1,10}?)过敏", "对{value}过敏", subject="allergy"),
    _rule(F, r"我(?:不能|不可以|不敢|不再)(?P<verb>吃|喝)(?P<value>.{1,10}?)CJK$", "不能{verb}{value}", subject="diet", negative=True),
    _rule(F, r"我(?:有|得了|查出了?|患有)(?P<value>.{1,8}?(?:炎|病|症|结节|过敏|突出|综合征|高血压|糖尿病))", "有{value}", subject="health"),
    _rule(F, r"(?P<who>医生|大夫|理疗师|康复师)(?P<verb>说|让我|建议我?|叫我|嘱咐我?)(?P<value>.+?)(?:[。！]|$)", "{who}{verb}{value}"),
    _rule(F, r"我(?:吃素|成了素食者|开始吃素)", "吃素", subject="diet"),
    # Relationships and pets (Chinese)
    _rule(F, r"我(?:家)?(?:养了|有)(?P<value>(?:一|两|二|三|四|\d)(?:只|条|个|位|匹)[\u4e00-\u9fff]{1,6}?)(?:[，,]?(?:叫|名叫|名字叫)(?P<name>[\u4e00-\u9fffA-Za-z]{1,6}))?(?:[，,。！]|了|$)",
          "有{value}[，叫{name}]"),
    _rule(F, r"我养(?P<value>狗|猫|宠物)了", "养了{value}"),
    # What follows about the same person, clause after clause, is one memory.
    _rule(F, r"我(?:的)?(?P<rel>{_CJK_REL})(?P<rest>(?:[\u4e00-\u9fffA-Za-z]{1,4}[，,]?)?(?!说|觉得|喜欢|想)[^，,。！？]{2,}?(?:[，,](?!她|他|我|你|但|不过|所以)[^，,。！？]{2,}?)*)(?=[。！？!?；;]|$)",
          "{rel}{rest}", possessive=True),
    # Plans and decisions (Chinese)
    _rule(G, r"我(?:们)?(?:现在|最后|已经|还是)?(?:不打算|不准备|不再|不想再?|决定不)(?P<value>[^，。！？]{2,}?)了?CJK$", "不再打算{value}", subject="plan", negative=True),
    _rule(D, r"我(?!们)(?:最终|最后|已经|还是)?决定(?:了)?[，,]?(?P<value>.{2,}?)CJK$", "决定{value}", subject="plan"),
    _rule(G, r"我(?:现在|最近|还|也)?(?:计划|打算|准备)(?P<value>.{2,}?)CJK$", "计划{value}", subject="plan"),
    _rule(G, r"我们(?:现在|最近|还|也)?(?:计划|打算|准备)(?P<value>.{2,}?)CJK$", "计划{value}", subject="plan", check="personal"),
    _rule(G, r"^我们(?:计划|打算)(?P<value>.{2,}?)CJK$", "项目计划{value}", about_project=True, check="technical"),
    # Events, activities and durations (Chinese)
    _rule(F, r"我(?:们)?(?P<value>[\u4e00-\u9fffA-Za-z]{1,8}?(?:\d+|[一二两三四五六七八九十半]+)(?:个)?(?:年|月|天|周|星期|礼拜)了)", "{value}"),
    _rule(F, r"(?:(?P<when>(?:\d{4}年)?\d{1,2}月(?:\d{1,2}日)?(?:那周)?)[，,]?)?我(?:们)?(?:刚|刚刚|已经|终于|也|还|今天|昨天|前天|上周|上个月|去年)?(?P<value>(?:去|参加|完成|做|买|报|开始|养|换|考|拿到|结束|辞|戒|学|订|签|看|办|卖|开|拿|收到|通过|考上|入职|回|到|接|生|见|搬|租|领|投|写|交|提|跑|参观|玩|吃|住|换成)了.{1,30}?)CJK$",
          "[{when}]{value}"),
    # Facts about the project (Chinese)
    _rule(F, r"(?:这个|我们的|本|该)?(?P<noun>项目|系统|应用|服务|网站|代码库)的(?P<what>[\u4e00-\u9fffA-Za-z ]{1,8}?)(?:是|为|叫|用的是|采用的是|采用|使用)(?P<value>.+?)CJK$",
          "{noun}的{what}是{value}", subject="project", about_project=True),
    _rule(F, r"(?:这个|我们的|本|该)?(?P<noun>项目|系统|应用|服务|代码库|仓库)(?P<verb>使用|用的是|采用|基于|依赖|运行在|部署在)了?(?P<value>.+?)CJK$",
          "{noun}{verb}{value}", subject="project", about_project=True),
    _rule(F, r"我们(?:的|项目的?)?(?P<what>数据库|后端|前端|技术栈|服务器|缓存|消息队列|框架|代码仓库|仓库|CI)(?:是|用的是|采用的是|跑在|部署在)(?P<value>[^，,。；;]+?)CJK$",
          "{what}是{value}", subject="project", about_project=True),
    _rule(F, r"^我们(?:现在|已经)?(?:从(?P<other>.+?))?(?:改用|换成|切换到|迁移到)了?(?P<value>.+?)CJK$", "项目改用{value}", subject="project", about_project=True),
    _rule(F, r"^我们(?:的项目)?(?:一直)?(?:使用|用的是|采用|用)(?P<value>.+?)CJK$", "项目使用{value}", subject="project", about_project=True),
    # Decisions (Chinese)
    _rule(D, r"(?:我们)?(?:最终|最后)?(?:决定|选择了?|选定了?|选用了?)(?:选择了?|选用了?|用|使用|采用)?(?P<value>.+?)(?:而不是|而非|，?不用|，?放弃了?)(?P<other>.+?)CJK$",
          "选择{value}而不是{other}", subject="decision", about_project=True),
    _rule(D, r"我们(?:最终|最后|已经)?决定(?:了)?(?P<value>.+?)CJK$", "决定{value}", about_project=True),
    # Lessons (Chinese)
    _rule(L, r"^(?P<what>.+?)(?:失败|报错|出错|崩溃|不工作)了?[，,]?(?:是)?因为(?P<why>[^，,；;]+)(?:[，,；;](?:所以)?(?:需要|必须|要)(?P<need>.+?))?$",
          "{what}失败是因为{why}[，需要{need}]", about_project=True),
    _rule(L, r"(?:必须|需要|得)先?(?P<need>.+?)才能(?P<value>.+?)CJK$", "需要{need}才能{value}", about_project=True),
    _rule(L, r"^(?:教训|经验|注意)(?:是)?[:：]\s*(?P<value>.+)$", "{value}", about_project=True),
    # Goals (Chinese)
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


# Only words with a letter in them: "2023年5月" stays as Chinese writes it.
_CJK_THEN_LATIN = re.compile(r"([\u4e00-\u9fff])(?=[0-9]*[A-Za-z])")
_LATIN_THEN_CJK = re.compile(
    r"((?<![A-Za-z0-9_.+#-])[A-Za-z0-9_.+#-]*[A-Za-z][A-Za-z0-9_.+#-]*)(?=[\u4e00-\u9fff])"
)


def _spaced(text: str) -> str:
    """A space between Chinese and Latin words, as Chinese typography sets them."""
    return _LATIN_THEN_CJK.sub(r"\1 ", _CJK_THEN_LATIN.sub(r"\1 ", text))


def normalise(value: str) -> str:
    value = re.sub(r"^(?:the|a|an|to use|using|to)\s+", "", value.lower().strip())
    return re.sub(r"\s+", " ", value)[:100]


def subject_and_value(rule: Rule, groups: dict[str, str]) -> tuple[str, str]:
    """What the statement is about, and what it says about it (see Rule)."""
    if not rule.subject:
        return "", ""
    value = groups.get("value", "")
    if rule.subject == "plan":
        # What the plan is to do, without when: "go to italy" for "go to Italy in May".
        said = normalise(value)
        key = normalise(_TIME_WORDS.sub("", value)) or said
        key = " ".join(key.split()[:3]) if " " in key else key[:6]
        return f"plan:{key}", ("not " + said) if rule.negative else said
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
    elif rule.replaces and groups.get("other"):
        subject, said = f"{rule.subject}:{normalise(groups['other'])}", normalise(value)
    else:
        subject, said = f"{rule.subject}:{normalise(value)}", normalise(value)
    if rule.negative:
        said = "not " + said
    return subject, said


_TECHNICAL = re.compile(
    r"\b(?:ship|deploy|release|migrate|launch|version|v\d|api|database|db|code|server|feature|"
    r"app|tests?|build|refactor|schema|endpoint|backend|frontend|repo|branch|ci|pipeline|sprint|"
    r"library|framework|module|service|bug|upgrade|python|django|staging|production)\b"
    r"|项目|系统|上线|发布|部署|迁移|版本|接口|数据库|代码|服务|功能|测试|需求|模块",
    re.IGNORECASE,
)
_TIME_WORDS = re.compile(
    r"\b(?:on|in|by|from|until|since|next|this|last|at|the week of) .*$"
    r"|^(?:下个?月|下周|下星期|明年|今年|明天|后天|这周|本周|周末|(?:\d{4}年)?\d{1,2}月(?:\d{1,2}日)?(?:那周)?)",
    re.IGNORECASE,
)


# Only rules in the sentence's script are tried: half the work for each sentence.
def _is_cjk_rule(rule: Rule) -> bool:
    return bool(_CJK.search(rule.pattern.pattern.replace(_END, "").replace(_CJK_END, "")))


_CJK_RULES = [rule for rule in RULES if _is_cjk_rule(rule)]
_LATIN_RULES = [rule for rule in RULES if not _is_cjk_rule(rule)]
_FIRST_WORD = re.compile(r"^(?:\\b|\^)([A-Za-z]+)\b(?![?|)*+{])")
_WORDS = re.compile(r"[a-z]+")


def _gate(rule: Rule) -> str:
    """A word every sentence the rule reads contains ("i" for "\\bI work at"), or ""."""
    found = _FIRST_WORD.match(rule.pattern.pattern)
    return found.group(1).lower() if found else ""


_LATIN_GATED = [(_gate(rule), rule) for rule in _LATIN_RULES]


def _passes(rule: Rule, groups: dict[str, str]) -> bool:
    value = groups.get("value", "")
    if rule.check == "place":
        return find_topic(value) is None
    if rule.check == "technical":
        return bool(_TECHNICAL.search(value) or find_topic(value))
    if rule.check == "personal":
        return not (_TECHNICAL.search(value) or find_topic(value))
    return True


def _matches(
    sentence: str, *, first_only: bool = False, taken: list[tuple[int, int]] | None = None
) -> list[tuple[Rule, dict[str, str]]]:
    """The rules that turn this sentence into statements, each on its own words, in rule order;
    the spans they read are added to ``taken``."""
    if not _is_statement(sentence):
        return []
    found: list[tuple[Rule, dict[str, str]]] = []
    taken = [] if taken is None else taken
    if _CJK.search(sentence):
        rules = _CJK_RULES
    else:
        words = set(_WORDS.findall(sentence.lower()))
        rules = [rule for gate, rule in _LATIN_GATED if not gate or gate in words]
    for rule in rules:
        for match in rule.pattern.finditer(sentence):
            start, end = match.span()
            if any(start < e and s < end for s, e in taken):
                continue
            groups = {name: clean_value(text) for name, text in match.groupdict().items() if text}
            if "value" in rule.pattern.groupindex and not _meaningful(groups.get("value", "")):
                continue
            if not _passes(rule, groups):
                continue
            found.append((rule, groups))
            taken.append((start, end))
            if first_only:
                return found
            break
    return found


def match_sentence(sentence: str) -> tuple[Rule, dict[str, str]] | None:
    """The first rule that turns this sentence into a statement, with its cleaned groups."""
    found = _matches(sentence, first_only=True)
    return found[0] if found else None


_DOUBLED_WORD = re.compile(r"\b(\w+)(?: \1\b)+", re.IGNORECASE)
_DOUBLED_CJK = re.compile(r"([\u4e00-\u9fff]{2,4})\1+")
_FIRST_PERSON_EN = [
    (re.compile(r"\bI'm\b"), "they're"),
    (re.compile(r"\bI am\b"), "they are"),
    (re.compile(r"\bI've\b"), "they've"),
    (re.compile(r"\bI'd\b"), "they'd"),
    (re.compile(r"\bI'll\b"), "they'll"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "themselves"),
    (re.compile(r"\bme\b"), "them"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "their"),
    (re.compile(r"\bmine\b"), "theirs"),
]


# What a request to the assistant says of the user and of itself, said neutrally: "answer me in
# English" is "answer in English", "keep them short" names what "them" stands for.
_ANSWERED_ME = re.compile(
    r"\b(answer|reply|respond|write|talk to|tell|hand|give|show|send) me\b", re.I
)
_PLURAL_THING = re.compile(r"\b(?:the|your|my) ((?:[\w-]+ ){0,3}[\w-]+s)\b", re.I)
_NEUTRAL_CJK = [
    (re.compile(r"(?:你|您)(?:就|也|先|再)?"), ""),
    (re.compile(r"(?:帮|替|给)我(?=[\u4e00-\u9fff])"), ""),
    (re.compile(r"(回答|回复|告诉|提醒)我"), r"\1"),
    (re.compile(r"(?:他们|她们|它们)"), "对方"),
    (re.compile(r"我的?"), "用户"),
]


def neutral(text: str) -> str:
    """``text`` without "I/me/my/you" or 我/你: a request about answers as a memory reads it."""
    if _CJK.search(text):
        for pattern, replacement in _NEUTRAL_CJK:
            text = pattern.sub(replacement, text)
        return clean_content(text.lstrip("，,、 "))
    text = _ANSWERED_ME.sub(
        lambda m: (
            m.group(1)
            if m.group(1).lower() in ("answer", "reply", "respond", "write")
            else f"{m.group(1)} the user"
        ),
        text,
    )

    def antecedent(match: re.Match[str]) -> str:
        before = list(_PLURAL_THING.finditer(text[: match.start()]))
        if not before:
            return match.group(0)
        return "the " + before[-1].group(1).removeprefix("user ")

    text = re.sub(
        r"(?:(?<=\bkeep )|(?<=\banswer )|(?<=\bin )|(?<=\bto )|(?<=\bfor ))them\b",
        antecedent,
        text,
    )
    text = re.sub(r"\byour\b ?", "", text, flags=re.I)
    text = re.sub(r"\b(?:let|for) me\b", lambda m: m.group(0)[:-2] + "the user", text)
    text = re.sub(r"\byou (\w+)", lambda m: f"the assistant {_third_person_verb(m.group(1))}", text)
    text = re.sub(r"\byou\b", "the assistant", text)
    return clean_content(text)


_CJK_ME = re.compile(r"(?<=[跟和与对比像])我(?![们国])")


def clean_content(content: str) -> str:
    """No bullet or punctuation in front, no doubled words, no first person."""
    content = _LEADING_JUNK.sub("", content.strip())
    content = _DOUBLED_CJK.sub(r"\1", _DOUBLED_WORD.sub(r"\1", content))
    if content.isascii() or not _CJK.search(content):
        for pattern, replacement in _FIRST_PERSON_EN:
            content = pattern.sub(replacement, content)
    else:
        # "作息跟我完全反过来": the user, as the memory reads it.
        content = _CJK_ME.sub("用户", content)
    content = content.rstrip(" ,;:，；：")
    return content[:1].upper() + content[1:]


_STARTS_WITH_VERB = re.compile(
    r"^(?:is|has|had|was|lives|works|moved|grew|got|went|prefers|plans|no longer|decided|"
    r"always|never|does|did|loves|likes|enjoys|adores|dislikes|allergic|cannot|name|wants|"
    r"goal|favourite|now|chose|split|broke|broken|[a-z]+ed\b|[a-z]+s\b)",
    re.IGNORECASE,
)


def _named(content: str, speaker: str, rule: Rule | None) -> str:
    """Another speaker's statement names them: "Mia went to ...", "Mia's sister ..."."""
    if not speaker:
        return content
    if _CJK.search(content):
        return speaker + content
    lowered = content[:1].lower() + content[1:]
    first_word = lowered.split(" ", 1)[0]
    if (rule is not None and rule.possessive) or not (
        _STARTS_WITH_VERB.match(content) or first_word in _PAST_WORDS
    ):
        return f"{speaker}'s {lowered}"
    if lowered.startswith("allergic") or lowered.startswith("cannot"):
        return (
            f"{speaker} is {lowered}" if lowered.startswith("allergic") else f"{speaker} {lowered}"
        )
    return f"{speaker} {lowered}"


def _speaker_subject(subject: str, speaker: str) -> str:
    if not speaker or not subject:
        return subject
    if subject.startswith("user:"):
        return f"person:{speaker.lower()}:{subject[5:]}"
    return f"person:{speaker.lower()}:{subject}"


def _build(
    rule: Rule,
    groups: dict[str, str],
    *,
    sentence: str,
    message_ids: list[int],
    kind: str | None,
    speaker: str,
) -> Candidate:
    content = clean_content(_fill(rule.template, groups).strip())
    content = _named(content, speaker, rule)[:MAX_CONTENT_CHARS]
    subject, value = _commuting(sentence) or subject_and_value(rule, groups)
    topic = find_topic(groups.get("value", "")) or find_topic(groups.get("other", ""))
    return Candidate(
        kind=kind or rule.kind,
        content=content,
        message_ids=message_ids,
        quote=sentence,
        tags=[topic[0]] if topic else [],
        confidence=settings.MEMORY_DEFAULT_CONFIDENCE,
        subject=_speaker_subject(subject, speaker),
        value=value,
        about_project=rule.about_project and not speaker,
        speaker=speaker,
    )


def candidate_from_sentence(
    sentence: str, *, message_ids: list[int], kind: str | None = None
) -> Candidate | None:
    """The statement the first matching rule reads in the sentence (see sentence_candidates)."""
    found = match_sentence(sentence)
    if found is None:
        return None
    rule, groups = found
    return _build(rule, groups, sentence=sentence, message_ids=message_ids, kind=kind, speaker="")


# A first-person statement that no rule reads is still kept when it says something
# checkable: a date, an amount, or a name.
_FIRST_PERSON = re.compile(
    r"(?-i:\bI\b)|\b(?:I'm|I've|I'd|my|we|we're|we've|our|me)\b|我|咱", re.IGNORECASE
)
_SUBSTANCE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|hundred|thousand|"
    r"half|dozen)\b|(?<=[a-z,] )(?-i:[A-Z][a-z]+)|(?<![一二两三四五六七八九十])(?!一点)[一二两三四五六七八九十百千万半]+(?:个|年|月|天|周|次|岁|公斤|块|元|斤|小时|分钟|点|只|条|位|口|套|辆|台)"
    r"|(?:周|星期|礼拜)[一二三四五六日天]",
    re.IGNORECASE,
)
_NOT_A_FACT = re.compile(
    r"^(?:I (?:think|guess|wonder|mean|know|see|agree|hope|suppose|feel like|bet|doubt|"
    r"can't believe|don't know)|I'd (?:love|like)|let me|let's|you\b|thank|sorry|haha|lol|"
    r"(?:tell|give|go|don't|do|get|check|make sure|remember|have|take|keep|call|ask|send|say|"
    r"enjoy|good luck|congrats|congratulations|well done|happy)\b|"
    r"我(?:觉得|想问|是说|知道|也不知道|不知道)|你|谢谢|哈哈)|(?:再说|再看|再聊|聊聊|看看吧)",
    re.IGNORECASE,
)
_DISCOURSE = re.compile(
    r"^(?:(?:so|and|but|also|actually|honestly|well|oh|anyway|ok|okay|yeah|yes|yep|plus|then|"
    r"right|hmm|ah|wow|haha|lol|mixed news|big news|other news|update|in other news|on the plus side|"
    r"funny timing|fingers crossed|confession|good news|bad news)\b[\s,.:!…]*)+|"
    r"^(?:对了|还有|另外|而且|不过|然后|对|嗯+|哈哈+|是啊|是的|其实|说实话|说到这个|跟你说|还有个好消息|有个好消息|有个坏消息|"
    r"还有个坏消息|说个开心的|好消息是|坏消息是|跟你说个事儿?)(?:[，,。！!…\s]+|$)"
    # A lead-in that gives context before the statement: "Quick context: …", 给你同步一下组里的情况：
    r"|^(?:(?:a )?(?:quick |little )?(?:bit of )?(?:context|background|fyi|heads up)\b[^:：.!?]{0,50}"
    r"|[^：:。！？]{0,12}(?:背景|情况|同步一下|交代一下|说明一下)[^：:。！？]{0,6})[:：]\s*",
    re.IGNORECASE,
)
_ABOUT_OTHERS = re.compile(rf"^(?:my|our) {_REL}\b|^我的?{_CJK_REL}", re.IGNORECASE)
_USER_SUBJECT_EN = re.compile(r"^(?:I'm|I am|I've|I have|I'll|I will|I'd|I)\b(?!')\s*")


_ME_AND = re.compile(r"^my ((?:[\w-]+ )?[\w-]+) and I\b ?", re.IGNORECASE)


def _third_person_start(text: str, speaker: str) -> str:
    """The first person at the start of a statement, as the memory reads it."""
    if _CJK.search(text[:3]):
        if text.startswith("我们"):
            return (speaker + "他们" + text[2:]) if speaker else text
        if text.startswith("我的"):
            text = text[2:]
        elif text.startswith("我"):
            text = text[1:]
        return speaker + text if speaker else text
    if partner := _ME_AND.match(text):
        # "My partner and I are off …": "They and their partner are off …".
        who = f"{speaker} and {speaker}'s" if speaker else "They and their"
        return f"{who} {partner.group(1)} {text[partner.end() :]}"
    if text[:3].lower() == "my ":
        return f"{speaker}'s {text[3:]}" if speaker else text[3:]
    match = _USER_SUBJECT_EN.match(text)
    if match is None:
        return text
    lead = match.group(0).strip().lower()
    rest = text[match.end() :]
    verb = {
        "i'm": "is ",
        "i am": "is ",
        "i've": "has ",
        "i have": "has ",
        "i'll": "will ",
        "i will": "will ",
        "i'd": "would ",
    }.get(lead, "")
    if lead == "i":
        rest = _third_person_verb(rest)
    return f"{speaker} {verb}{rest}" if speaker else f"{verb}{rest}"


_NOT_CONJUGATED = frozenset(
    [
        "can",
        "could",
        "will",
        "would",
        "should",
        "must",
        "might",
        "may",
        "shall",
        "also",
        "just",
        "really",
        "still",
        "always",
        "never",
        "usually",
        "often",
        "sometimes",
        "only",
        "even",
        "already",
    ]
)
_ADVERBS = frozenset(
    [
        "usually",
        "often",
        "sometimes",
        "always",
        "never",
        "also",
        "just",
        "really",
        "still",
        "mostly",
    ]
)
_NEGATIONS = {
    "don't": "doesn't",
    "do": "does",
    "haven't": "hasn't",
    "was": "was",
    "wasn't": "wasn't",
}


def _third_person_verb(rest: str) -> str:
    """The verb after a dropped "I" in the third person: "use Vim" → "uses Vim"."""
    word, space, tail = rest.partition(" ")
    lower = word.lower()
    if lower in _NEGATIONS:
        return f"{_NEGATIONS[lower]}{space}{tail}"
    if lower in _ADVERBS and tail:
        return f"{word}{space}{_third_person_verb(tail)}"
    if (
        not word.isalpha()
        or not word.islower()
        or lower in _NOT_CONJUGATED
        or lower.endswith("ed")
        or lower in _PAST_WORDS
    ):
        return rest
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        word += "es"
    elif lower.endswith("y") and lower[-2:-1] not in "aeiou":
        word = word[:-1] + "ies"
    else:
        word += "s"
    return f"{word}{space}{tail}"


def _small_talk(text: str, dated: Dated) -> bool:
    """Whether the statement is talk rather than a fact about anyone (memories.gate): a
    reaction or remark that goes on to say what the speaker did or when ("Same, I start on
    Monday", "Perfect, sending it tomorrow") is a fact."""
    if SMALL_TALK.search(text) or FEELING_FOR_LISTENER.search(text):
        return True
    if not (REACTION.match(text) or REMARK.match(text)):
        return False
    return not (_FIRST_PERSON.search(text) or dated.date is not None)


_OTHERS_TASTES = re.compile(
    rf"^(?:my|our) {_REL}(?: (?-i:[A-Z])\w+)? (?:prefers|thinks)\b"
    rf"|^我的?{_CJK_REL}(?:喜欢|觉得|想|偏好|讨厌)",
    re.IGNORECASE,
)
# A sentence without a subject that starts with what happened: "Watched a documentary ...".
_IMPLICIT_I = re.compile(rf"^(?:just |finally |also |then )?{_PAST}\b", re.IGNORECASE)
_COMMON_STARTS_TEXT = (
    "the this that these those it its it's she he they them their there here we you your a an "
    "but and so yes no ok okay not what when where which who how why all some any every each "
    "one if then also just still really very maybe perhaps probably honestly anyway well oh "
    "amazing brilliant perfect great good nice cool lovely awesome sure thanks thank sorry "
    "exactly absolutely definitely totally true right wow haha lol hey hi hello"
)
_COMMON_STARTS = frozenset(_COMMON_STARTS_TEXT.split(" "))
_START_WORD = re.compile(r"^((?-i:[A-Z])[\w-]+)(?:'s)?\b")


def _strong(text: str, dated: Dated, reference: date | None) -> bool:
    """A date other than today, an amount, or a name: something a question could ask for."""
    if dated.date is not None and not (dated.granularity == "day" and dated.date == reference):
        return True
    if _SUBSTANCE.search(text):
        return True
    start = _START_WORD.match(text)
    if start is None or start.group(1).lower() in _COMMON_STARTS:
        return False
    # A capital at the start is a name only when it is one's ("Owen's dad") or not English.
    return start.group(0).endswith("'s") or not start.group(1).isascii()


# Where the clauses of a statement no rule reads part: a comma, "but", 但是, 不过.
_ASIDE_BREAK = re.compile(r"\s*[，,；;]\s*|\s+but\s+|但是|不过")
_ASIDES = (REASON_ONE_OFF_PROBLEM, REASON_FORMER_PLAN)
_INSTEAD = re.compile(r"\binstead\b|改成|改为|换成|而是|推迟到|改到|提前到", re.IGNORECASE)


def _without_asides(text: str) -> str:
    """``text`` without its clauses that report a one-off problem or a plan given up, when
    what is left says something ("We were going to do Greece but …, we're going up to
    Glasgow instead"; "…，数据校验没跑完，陈总决定上线推迟到6月10日")."""
    if rejection(Kind.FACT, text) not in _ASIDES:
        return text
    clauses = [clause for clause in _ASIDE_BREAK.split(text) if clause.strip()]
    kept = [clause for clause in clauses if rejection(Kind.FACT, clause) not in _ASIDES]
    if not kept or len(kept) == len(clauses):
        return text
    said = ("，" if _CJK.search(text) else ", ").join(kept)
    # Only what replaces the plan or answers the problem; the rest is the report's detail.
    if not (_INSTEAD.search(said) or kind_by_definition(said) in (Kind.DECISION, Kind.GOAL)):
        return text
    return said[:1].upper() + said[1:]


def _fallback(
    sentence: str,
    dated: Dated,
    *,
    message_ids: list[int],
    speaker: str,
    reference: date | None,
    named: str = "",
    said_in: str = "",
) -> Candidate | None:
    """A statement no rule reads, kept as said when it holds something checkable (a
    statement about someone named is); ``said_in``: the sentence a clause is part of, whose
    subject it shares."""
    text = _without_asides(_DISCOURSE.sub("", dated.text).strip())
    if _NOT_A_FACT.search(text) or _small_talk(text, dated) or _OTHERS_TASTES.match(text):
        return None
    if _CJK.search(text):
        if len(text) < 6:
            return None
        if not (
            _strong(text, dated, reference)
            or re.search(r"了|过|已经|我", said_in or text)
            or (named and text.startswith(named))
            or _NICKNAME_START.match(text)
            or re.search(_CJK_NICKNAME, text)
        ):
            return None
    else:
        if len(text.split()) < 3:
            return None
        personal = _FIRST_PERSON.search(said_in or text) or _IMPLICIT_I.match(text)
        # What the user uses is a fact ("I write all my tests with pytest now").
        uses = (personal and _used_for(text)[0]) or (named and text.startswith(named))
        if not (_strong(text, dated, reference) or uses) and not (personal and dated.date):
            return None
    content = _third_person_start(text, speaker)
    if speaker and _IMPLICIT_I.match(content):
        content = f"{speaker} {content[:1].lower()}{content[1:]}"
    content = clean_content(content)[:MAX_CONTENT_CHARS]
    if speaker and not content.startswith(speaker):
        content = f"{speaker}: {content}"
    subject, value = ("", "") if speaker else (_commuting(text) or _used_for(text))
    return Candidate(
        kind=Kind.FACT,
        content=content,
        message_ids=message_ids,
        quote=sentence,
        confidence=settings.MEMORY_DEFAULT_CONFIDENCE,
        event_date=dated.date,
        speaker=speaker,
        subject=subject,
        value=value,
    )


# What the user uses for something: "I use Vim for everything", "读书笔记都记在印象笔记里".
_USES = re.compile(
    r"\b(?:use|uses|using|used|work in|write in|draft in|run on|switched to)\b"
    r"|\b(?:write|writes|build|builds|test|tests|do|does)\b[^.;]{0,30}\bwith\b|用|使用|记在|写在",
    re.IGNORECASE,
)


def _used_for(text: str) -> tuple[str, str]:
    """("uses:<topic>", the value) when ``text`` says a well-known tool is used, else ("", "")."""
    topic = find_topic(text) if _USES.search(text) else None
    return (f"uses:{topic[0]}", topic[1]) if topic else ("", "")


# How the user gets to work ("I take the tube to work", 平时坐地铁上班, 现在更喜欢开车上班):
# one attribute, whether said as a habit, a fact or a preference.
_COMMUTE = re.compile(
    r"(?:坐|乘|搭|开|骑|走路|步行)[\u4e00-\u9fff]{0,3}?(?:去)?(?:上班|通勤)|通勤"
    r"|\b(?:commute|commuting)\b|\bto (?:work|the office)\b",
    re.IGNORECASE,
)
_MEANS = [
    (means, re.compile(words, re.IGNORECASE))
    for means, words in [
        ("subway", r"地铁|\b(?:subway|metro|tube|underground)\b"),
        ("car", r"开车|\b(?:drive|driving|car)\b"),
        ("bus", r"公交|巴士|\bbus\b"),
        ("bike", r"骑车|自行车|电动车|\b(?:bike|cycle|cycling)\b"),
        ("walk", r"走路|步行|\bwalk"),
        ("train", r"火车|高铁|\btrain\b"),
    ]
]


def _commuting(text: str) -> tuple[str, str] | None:
    """("user:commute", how) when ``text`` says how the user gets to work, else None."""
    if not _COMMUTE.search(text):
        return None
    return next((("user:commute", means) for means, words in _MEANS if words.search(text)), None)


def statement_subject(text: str) -> tuple[str, str]:
    """What a statement is about and what it says of it, as extraction reads them."""
    commuting = _commuting(text)
    if commuting:
        return commuting
    found = match_sentence(text)
    if found is not None:
        return subject_and_value(*found)
    return _used_for(text)


# A picture or sticker shared in the middle of a turn ("婷婷[图片] 三个月大").
_MEDIA_PLACEHOLDER = re.compile(
    r"\s*\[(?:图片|照片|视频|表情|语音|image|photo|picture|video|sticker|voice message)\]\s*",
    re.IGNORECASE,
)
# Laughter after what was said ("…对我的胃简直太友好了哈哈", "… lol").
_LAUGHTER_AFTER = re.compile(
    r"(?<=\S)\s*(?:[，,]?\s*(?:哈哈+|嘿嘿|hahaha*|lol|lmao))+[。！!.]*$", re.I
)
# A question that opens with what the asker tells first: "I have two cats, where should the
# router go?", 家里有两只猫，路由器放哪儿？ (the told part, up to the last comma).
_TOLD_BEFORE_QUESTION = re.compile(r"^(.{6,}?)[,，]\s*[^,，]+[?？]$")
_ASKS = re.compile(
    r"为什么|为啥|什么|怎么|哪|谁|多少|几|吗|问一下|请问|想问"
    r"|\b(?:why|what|how|which|who|where|when|whether|wonder|any idea)\b",
    re.IGNORECASE,
)


def sentence_candidates(
    sentence: str,
    *,
    message_ids: list[int],
    speaker: str = "",
    sent_at: date | datetime | None = None,
    named: str = "",
) -> list[Candidate]:
    """Every statement in one sentence, dated against ``sent_at``; ``named``: the person or
    pet the message last named, whom a statement starting with their name is about.

    ``speaker`` is empty for the account's user and names anyone else, whose
    statements then name them ("Mia went to ...").
    """
    sentence = _LEADING_JUNK.sub("", _MEDIA_PLACEHOLDER.sub("", sentence)).strip()
    sentence = _LAUGHTER_AFTER.sub("", sentence) or sentence
    request = not speaker and not sentence.endswith(("?", "？")) and is_answer_style(sentence)
    if not (request or _is_statement(sentence)):
        # "家里有两只猫，路由器放哪儿不容易被它们碰倒？": what is told before the question.
        told = _TOLD_BEFORE_QUESTION.match(sentence)
        if told is None or _ASKS.search(told.group(1)) or not _is_statement(told.group(1)):
            return []
        return sentence_candidates(
            told.group(1), message_ids=message_ids, speaker=speaker, sent_at=sent_at, named=named
        )
    dated = resolve(sentence, sent_at)
    text = _DISCOURSE.sub("", dated.text).strip() or dated.text
    text = _THEM_NAMED.sub(lambda m: f"{m.group(0)[: m.start('them') - m.start()]}{m['np']}", text)
    if request:
        clauses = _CLAUSE_BREAK.split(text)
        if len(clauses) > 1 and not all(is_answer_style(clause) for clause in clauses):
            # "I draft in Obsidian, and when you give feedback I'd rather ...": each clause.
            return [
                candidate
                for clause in clauses
                for candidate in sentence_candidates(
                    clause, message_ids=message_ids, speaker=speaker, sent_at=sent_at
                )
            ]
        # A request about answers is one preference, every clause of it kept.
        return [
            Candidate(
                kind=Kind.PREFERENCE,
                content=neutral(text)[:MAX_CONTENT_CHARS],
                message_ids=message_ids,
                quote=sentence,
                confidence=settings.MEMORY_DEFAULT_CONFIDENCE,
                tags=[ANSWERS],
            )
        ]
    read, taken = _rule_statements(
        text, dated, sentence=sentence, message_ids=message_ids, speaker=speaker
    )
    candidates: list[Candidate] = []
    for _end, candidate in read:
        if all(candidate.content != other.content for other in candidates):
            candidates.append(candidate)
    reference = sent_at.date() if isinstance(sent_at, datetime) else sent_at
    for start, clause in _clauses_unread(text, taken):
        before = [candidate for end, candidate in read if end <= start]
        if (
            clause != text
            and _CJK.search(clause)
            and _chinese_clause_read(clause, before, reference)
        ):
            continue
        fallback = _fallback(
            sentence,
            dated if clause == text else resolve(clause, None),
            message_ids=message_ids,
            speaker=speaker,
            reference=reference,
            named=named,
            said_in=text,
        )
        if fallback is not None:
            candidates.append(fallback)
    return candidates


def _rule_statements(
    text: str, dated: Dated, *, sentence: str, message_ids: list[int], speaker: str
) -> tuple[list[tuple[int, Candidate]], list[tuple[int, int]]]:
    """What the rules read in ``text``: each statement with where its reading ends (in order
    of position), and the spans they read."""
    read: list[tuple[int, Candidate]] = []
    taken: list[tuple[int, int]] = []
    for (rule, groups), (start, end) in zip(_matches(text, taken=taken), taken, strict=True):
        candidate = _build(
            rule, groups, sentence=sentence, message_ids=message_ids, kind=None, speaker=speaker
        )
        candidate.event_date = dated.date
        candidate.content = _with_date(candidate.content, dated, text, (start, end))
        elaboration = _ELABORATION.match(text, end)
        if elaboration is not None and not any(end < e and s < elaboration.end() for s, e in taken):
            # "I like a functional style: composition instead of inheritance".
            candidate.content = f"{candidate.content}: {elaboration.group(1).strip()}"
            end = elaboration.end()
        read.append((end, candidate))
    return sorted(read, key=lambda item: item[0]), taken


def _chinese_clause_read(clause: str, before: list[Candidate], reference: date | None) -> bool:
    """Whether a Chinese clause the rules did not read is done with: it goes on with the
    statement ``before`` it ("住在北京，已经五年了", its reason, its contrast) unless it states a
    kind of its own; one before any statement stands alone only when it says something
    checkable. False when it is to be read as a statement of its own."""
    kind = kind_by_definition(clause)
    if before and kind in (Kind.FACT, before[-1].kind):
        if not rejection(kind, clause):  # Not "…，一到高峰期就超时".
            said = f"{before[-1].content}，{clause.rstrip('。.！!')}"
            before[-1].content = said[:MAX_CONTENT_CHARS]
        return True
    return (
        not before and kind == Kind.FACT and not _strong(clause, resolve(clause, None), reference)
    )


# "I've gone back to paper books; I prefer them for reading in bed": "them" is what the
# clause before it named last.
_THEM_NAMED = re.compile(
    r"(?P<np>\b(?:(?!(?:to|the|a|an|on|in|of|my|our|your|for|with|and|back|all)\b)[A-Za-z-]+ )?"
    r"[A-Za-z-]+s)\s*[;,]\s*(?:and |but |so )?I (?:\w+ )?(?:prefer|like|love|use|enjoy|want|keep)"
    r" (?P<them>them|those)\b",
    re.IGNORECASE,
)


# What a colon after a statement adds to it.
_ELABORATION = re.compile(r"\s*[:：]\s*([^:：.;!?。；！？]{3,80})(?=[.;!?。；！？]|$)")
_CLAUSE_SEPARATOR = re.compile(r"[,;，；]|\b(?:and|but)\b")


def _with_date(content: str, dated: Dated, text: str, span: tuple[int, int]) -> str:
    """``content`` with the date its clause states in full, when the rule's wording left it
    out ("I start at Wren Analytics on 2 March 2026": the start's date is part of the fact;
    not so in "We're moving next month, I got a job at Siemens")."""
    day = dated.date
    if day is None or dated.granularity not in (DAY, MONTH) or str(day.year) in content:
        return content
    at, (start, end) = text.find(str(day.year)), span
    if at < 0 or _CLAUSE_SEPARATOR.search(text[end:at] if at >= end else text[at:start]):
        return content
    if _CJK.search(content):
        return f"{chinese(day, dated.granularity)}{content}"[:MAX_CONTENT_CHARS]
    return f"{content} {english(day, dated.granularity)}"[:MAX_CONTENT_CHARS]


# Where a compound sentence's clauses part: a semicolon, ", and" or ", so" before a new
# subject; in Chinese, a comma too.
_COMPOUND_BREAK = re.compile(
    r"\s*;\s*|；|,? and (?=(?:when|whenever|if|I|I'm|I've|we|we're|my|our|all my|all our|the|"
    r"she|he|they|it's|there)\b)|, so (?=(?:I|I'm|I'd|we|we're|my|our)\b)",
    re.IGNORECASE,
)
_CJK_COMPOUND_BREAK = re.compile(r"[；;，,]")
_CJK_SEMICOLON = re.compile(r"[；;]")


def _clause_bounds(text: str, breaks: re.Pattern[str]) -> list[tuple[int, int]]:
    """Where each clause of ``text`` starts and ends, parted by ``breaks``."""
    bounds, start = [], 0
    for separator in breaks.finditer(text):
        if breaks is _COMPOUND_BREAK and len(text[start : separator.start()].split()) < 3:
            continue  # "My partner and I are off …": one subject.
        bounds.append((start, separator.start()))
        start = separator.end()
    bounds.append((start, len(text)))
    return [(s, e) for s, e in bounds if text[s:e].strip(" ,.!。！")]


def _clauses_unread(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, str]]:
    """What of ``text`` the fallback reads: when rules read part of a compound sentence, the
    clauses they did not read (neighbours together); when none did, the whole sentence, or
    each clause when they state different kinds ("I move 20% into savings every payday, and
    all my subscriptions go on my Monzo card": a pattern and a fact; 我每周游泳三次；另外准备参加
    5月17日的半程马拉松: a pattern and a goal)."""
    cjk = bool(_CJK.search(text))
    if taken:
        clauses = _clause_bounds(text, _CJK_COMPOUND_BREAK if cjk else _COMPOUND_BREAK)
        unread: list[tuple[int, int]] = []
        for s, e in clauses:
            if any(s < te and ts < e for ts, te in taken):
                continue
            if unread and not any(unread[-1][1] <= ts < s for ts, _te in taken):
                unread[-1] = (unread[-1][0], e)  # The clause before was unread too.
            else:
                unread.append((s, e))
        return [(s, text[s:e].strip()) for s, e in unread] if len(clauses) > 1 else []
    parts = [
        (s, text[s:e].strip())
        for s, e in _clause_bounds(text, _CJK_SEMICOLON if cjk else _COMPOUND_BREAK)
    ]
    if len(parts) > 1 and len({kind_by_definition(part) for _s, part in parts}) > 1:
        return parts
    return [(0, text)]


# The user takes up what the assistant just proposed.
_ACCEPTS = re.compile(
    r"^(?:ok(?:ay)?|sure|yes|yeah|yep|yup|great|perfect|sounds good|makes sense|good idea|deal|"
    r"fine|alright|agreed|fair enough|will do|that works|done|brilliant|love it|nice)\b"
    r"|\b(?:your suggestion|you suggested|you recommended|what you said|the one you|"
    r"(?:go|going) with (?:that|it|this|your|what you)|I'll (?:do|try|use|go with) (?:that|it|this|those)|"
    r"doing (?:exactly )?that|I'm using that|(?:the )?(?:first|second|third|fourth|fifth|last) one|"
    r"(?:that|this)(?: one)? it is|let's do (?:that|it))\b"
    r"|^(?:好的?|行|可以|没问题|有道理|这个好|就这么(?:办|定了?|改|做|来|弄)|听你的)|就按你说的|按你说的|你说的|你推荐的|那就(?:用|按|这么|放|做)|就用你|按这个",
    re.IGNORECASE,
)
# A word that only acknowledges a turn ("ok", "Yeah, yeah.", 嗯): alone, it adopts nothing.
_ACKNOWLEDGES = re.compile(
    r"(?:ok(?:ay)?|sure|yes|yeah|yep|yup|fine|alright|all right|right|great|perfect|nice|cool|"
    r"hmm+|ooh+|oh|ah|嗯+|好的?|行|可以|哦|噢|好吧)",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"[^,.!?;，。！？；]+[,.!?;，。！？；]*")
# The words of a proposal a reply may take up: Latin words of four letters or more, CJK pairs.
_PROPOSAL_WORD = re.compile(r"[A-Za-z][\w+#.-]{3,}|(?=([\u4e00-\u9fff]{2}))")
# A reply that says what to do with "it" is about the task at hand ("Fine, leave it blank").
_TASK_AT_HAND = re.compile(r"\b(?:it|that|this|them)\b|它|这个|那个", re.IGNORECASE)
_NOT_PROPOSAL_WORDS = frozenset([
    "that", "this", "then", "with", "from", "have", "will", "your", "what", "just", "also",
    "more", "some", "them", "they", "there", "here", "into", "about", "been", "were", "would",
    "could", "should", "their", "which", "when",
])  # fmt: skip
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "第一": 1, "第二": 2,
             "第三": 3, "第四": 4, "第五": 5}  # fmt: skip
_ORDINAL = re.compile(r"\b(first|second|third|fourth|fifth)\b|(第一|第二|第三|第四|第五)", re.I)
_OPTION = re.compile(r"(?:^|[\s;；:：])(\d)[).、]\s*([^;；\n]+)")
_RECOMMENDS = [
    re.compile(
        r"\b(?:I'd|I would)(?: \w+)? (?:suggest|recommend)(?:ing)? (?:that you )?(?P<v>.+)", re.I
    ),
    re.compile(
        r"\b(?:I suggest|I recommend|I'd go with|I would go with)(?: that you)? (?P<v>.+)", re.I
    ),
    re.compile(
        r"\b(?:I'd|I would)(?: \w+)? (?P<v>(?:use|go with|start with|pick|choose|add|keep|try|store|run|put|set|move) .+)",
        re.I,
    ),
    re.compile(
        r"\b(?:you could|you can|you should|you'll want to|try|consider|simplest version:?|best to) (?P<v>.+)",
        re.I,
    ),
    re.compile(r"(?:建议|推荐|可以试试|可以考虑|最好|不妨)(?P<v>.+)"),
]


def _recommendation(text: str, choice: str) -> str:
    ordinal = _ORDINAL.search(choice)
    if ordinal is not None:
        wanted = _ORDINALS[(ordinal.group(1) or ordinal.group(2)).lower()]
        for number_text, option in _OPTION.findall(text):
            if int(number_text) == wanted:
                return clean_value(option)
    for sentence in sentences(text):
        if sentence.endswith(("?", "？")):
            continue
        for pattern in _RECOMMENDS:
            match = pattern.search(sentence)
            if match is not None:
                found = match.group("v")
                if _CJK.search(found):
                    found = re.split(r"[，,；;]", found)[0]
                return clean_value(found)
    return ""


# A clause that turns down what was proposed by its measure ("two hours is too much",
# 两小时太多了): the counter-offer after it is what the user wants.
_TURNED_DOWN = re.compile(
    r"^[^,.;]{0,40}\btoo (?:much|many|long|short|little|few|expensive|hard|early|late|often|"
    r"slow|fast|big|small)\b[^,.;]{0,20}$|^[^，,。；]{0,20}太(?:多|长|少|短|贵|难|早|晚|久|频繁|快|慢|大|小)了?$",
    re.IGNORECASE,
)


def counter_offer(reply: str) -> str:
    """``reply`` to a proposal without the clauses at its start that turn it down."""
    rest = reply.strip()
    while (clause := _CLAUSE.match(rest)) is not None and _TURNED_DOWN.match(
        clause.group(0).strip(" ,.!;，。！；")
    ):
        rest = rest[clause.end() :].lstrip()
    return rest or reply


# Taking back something said earlier ("Scratch the Kindle bit", "forget what I said about
# Vim", 刚才说的地铁那条不算): what it names is no longer so.
_RETRACTION = re.compile(
    r"\b(?:scratch|forget|ignore|disregard) (?:what I said about )?(?:the |my )?"
    r"(?P<what>[\w.+#-]+(?: [\w.+#-]+)??)(?: (?:bit|part|thing|one))?(?=[,.!;]|$| though)"
    r"|(?:刚才|之前|前面)(?:说的|提到的)(?P<zh>[\w.+#-]{1,12}?)(?:那条|那句|那部分)?"
    r"(?:不算|作废|删掉|忘掉|去掉)",
    re.IGNORECASE,
)


# A sentence that goes on with the statement before it: what a lesson requires ("It has to
# run automatically.", 一定要自动跑), when a new job starts ("I start on 4 May 2026 as …",
# 3月16日入职).
_LESSON_GOES_ON = re.compile(
    r"^(?:it|that|this|they)(?: really| always)? (?:has to|have to|must|needs? to|should)\b"
    r"|^(?:它|这|那)?(?:必须|一定要|得|需要|应该)",
    re.IGNORECASE,
)
_JOB_GOES_ON = re.compile(
    r"^I(?:'ll| will|'m| am)? (?:start|starting|begin|beginning)\b(?! at)"
    r"|^我?(?:\d{4}年)?\d{1,2}月\d{1,2}[日号](?:正式)?(?:入职|上班|报到)",
    re.IGNORECASE,
)


# What led to a failure, told right after it ("The backup drive hadn't been plugged in since
# August", 备份盘好久没插了): the one-off's details, not a memory (memories.gate).
_CIRCUMSTANCE = re.compile(
    r"\b(?:had(?:n't| not| never)|hadn't|wasn't|weren't|didn't)\b|一直没|从来没|好久没|忘了",
    re.IGNORECASE,
)


def _goes_on(statement: Candidate, sentence: str) -> bool:
    """Whether ``sentence`` goes on with ``statement`` (see _LESSON_GOES_ON)."""
    if statement.kind == Kind.LESSON:
        return bool(_LESSON_GOES_ON.match(sentence))
    return statement.subject == "user:employer" and bool(_JOB_GOES_ON.match(sentence))


def retracted(sentence: str) -> str:
    """What ``sentence`` takes back of what was said before, or ""."""
    match = _RETRACTION.search(sentence)
    if match is None:
        return ""
    what = (match.group("what") or match.group("zh") or "").strip().rstrip(".")
    return "" if what.lower() in _EMPTY_VALUES or what in ("那", "这") else what


def _proposal_words(text: str) -> set[str]:
    return (
        {
            (match.group(1) or match.group(0)).lower().rstrip(".")
            for match in _PROPOSAL_WORD.finditer(text)
        }
        - _NOT_PROPOSAL_WORDS
        - {""}
    )


def _reply_after_acceptance(reply: str) -> tuple[bool, bool, str]:
    """Whether ``reply`` opens by accepting, whether it clearly does ("let's do that",
    就按你说的, not a bare "ok"), and the first sentence that follows the acceptance."""
    accepted = clearly = False
    rest = reply.strip()
    while (clause := _CLAUSE.match(rest)) is not None:
        said = clause.group(0).strip(" ,.!;，。！；")
        if _ACKNOWLEDGES.fullmatch(said):
            accepted = True
        elif _ACCEPTS.search(said) and len(said.split()) <= 6 and len(said) <= 30:
            accepted = clearly = True
        else:
            break
        rest = rest[clause.end() :].lstrip()
    following = sentences(rest)
    return accepted, clearly, following[0] if following else ""


def _proposes(text: str) -> bool:
    """Whether an assistant's turn proposes something: it recommends ("I'd suggest …", 建议…)
    or says how things could be without asking anything."""
    if _recommendation(text, ""):
        return True
    return not any(sentence.endswith(("?", "？")) for sentence in sentences(text))


def adopted_candidate(assistant: WindowMessage, user: WindowMessage) -> Candidate | None:
    """What the user decided by accepting the assistant's previous turn, if they did.

    A reply that goes on to say what was decided, in words of the proposal ("OK, let's do
    that. Redis as the broker, RabbitMQ goes."; 行，就按你说的，上 Redis 缓存), is the decision
    in the user's words; its quote is that sentence, when the assistant proposed something
    (after a bare "yeah" or 嗯嗯: recommended it); agreeing with a question decides nothing.
    One that goes on with a question ("Yeah, yeah. What's band steering?") adopts nothing,
    nor does a bare "ok" or 嗯."""
    accepted, clearly, following = _reply_after_acceptance(user.content)
    if not accepted and _ACCEPTS.search(user.content.strip()):
        accepted = clearly = True
    if not accepted or (following and not _is_statement(following)):
        return None
    if (
        following
        and (
            _proposes(assistant.content)
            if clearly
            else bool(_recommendation(assistant.content, ""))
        )
        and not _TASK_AT_HAND.search(following)
        and _proposal_words(following) & _proposal_words(assistant.content)
    ):
        decided = clean_content(resolve(following, user.sent_at).text).rstrip(".。!！")
        topic = find_topic(decided)
        return Candidate(
            kind=Kind.DECISION,
            content=decided[:MAX_CONTENT_CHARS],
            message_ids=[assistant.id, user.id],
            quote=following[:MAX_CONTENT_CHARS],
            tags=[topic[0]] if topic else [],
            confidence=settings.MEMORY_DEFAULT_CONFIDENCE,
            subject=f"decision:{topic[0]}" if topic else "",
            value=topic[1] if topic else "",
            about_project=bool(topic or _TECHNICAL.search(decided)),
        )
    if not clearly:
        return None
    recommendation = _recommendation(assistant.content, user.content)
    if len(recommendation.split()) < 2 and len(recommendation) < 6:
        return None
    recommendation = clean_content(resolve(recommendation, assistant.sent_at).text)
    recommendation = recommendation[:1].lower() + recommendation[1:]
    if _CJK.search(recommendation):
        content = f"采纳建议：{recommendation}"
    else:
        content = f"Went with the suggestion: {recommendation}"
    topic = find_topic(recommendation)
    return Candidate(
        kind=Kind.DECISION,
        content=content[:MAX_CONTENT_CHARS],
        message_ids=[assistant.id, user.id],
        quote=user.content.strip()[:MAX_CONTENT_CHARS],
        tags=[topic[0]] if topic else [],
        confidence=settings.MEMORY_DEFAULT_CONFIDENCE,
        subject=f"decision:{topic[0]}" if topic else "",
        value=topic[1] if topic else "",
        about_project=bool(topic or _TECHNICAL.search(recommendation)),
    )


# Who a sentence names (a pet "called Biscuit", "my sister Inês", "Marta is our designer"),
# and a sentence that starts with "She"/"He"/她/他, which is about them.
# A Chinese nickname after who they are: 室友阿杰在…, 后端负责人是老周.
_CJK_NICKNAME = rf"(?:{_CJK_REL}|是)((?:阿|小|老)[\u4e00-\u9fff])(?=[在是，,。做也很的跟和]|$)"
_NAMES_SOMEONE = re.compile(
    rf"\b(?:called|named|my {_REL}) ((?-i:[A-Z])[\w'-]+)"
    r"|(?:^|, |\band )((?-i:[A-Z])[\w'-]+) (?:is|was|owns|works|lives)\b"
    r"|(?:叫|名叫|名字叫)([\u4e00-\u9fff]{1,3}?)(?=[，,。！]|$)"
    rf"|{_CJK_NICKNAME}",
    re.IGNORECASE,
)
_NICKNAME_START = re.compile(rf"^(?:阿|小|老)[\u4e00-\u9fff](?:{_CJK_REL}|是|在)")
# A Chinese sentence that starts with when, without a subject of its own ("前阵子查出肾不太好"):
# right after one about someone named, it goes on about them.
_SUBJECTLESS_CJK = re.compile(
    r"^(?:前阵子|前段时间|最近|前几天|上个月|上周|昨天|今天|去年|今年|后来|之后|平时)(?![^，,。]*[我你他她它])"
)
_NOT_NAMES = frozenset(
    ["here", "everything", "nothing", "someone", "everyone", "life", "work", "today"]
)
_PRONOUN_START = re.compile(
    r"^(?:(?:she|he)(?:'s| is)\b|(?:she|he)\b|(?:她|他)(?!们))", re.IGNORECASE
)


def _pronoun_named(sentence: str, named: str, *, just_named: bool = False) -> tuple[str, str]:
    """The sentence with a leading "She"/"He"/她/他 replaced by the last one named before it
    in the message (or, ``just_named`` in the sentence before, named in front of a Chinese
    sentence without a subject), and who is named now."""
    if named and just_named and _SUBJECTLESS_CJK.match(sentence):
        sentence = named + sentence
    elif named:
        start = _PRONOUN_START.match(sentence)
        if start is not None:
            said = start.group(0)
            if _CJK.search(said):
                replacement = named
            else:
                replacement = f"{named} is" if said.lower().endswith(("'s", " is")) else named
            sentence = replacement + sentence[start.end() :]
    names = [
        name
        for match in _NAMES_SOMEONE.finditer(sentence)
        for name in match.groups()
        if name and name.lower() not in _COMMON_STARTS and name.lower() not in _NOT_NAMES
    ]
    return sentence, names[-1] if names else named


# What the assistant asks for with its last sentence ("Where will it be deployed?",
# 每天能花多少时间？): a short reply's first sentence is the answer.
_WH_QUESTION = re.compile(
    r"^(?:and |so )?(?:where|what|which|how|when|who)\b.*\?$|^[^？?]*(?:哪|什么|几|多少|多久|怎么|谁)[^？?]*？$",
    re.IGNORECASE,
)
_YOU_ASKED = [
    (re.compile(r"\bdo you\b", re.I), "does the user"),
    (re.compile(r"\bare you\b", re.I), "is the user"),
    (re.compile(r"\bhave you\b", re.I), "has the user"),
    (re.compile(r"\bwere you\b", re.I), "was the user"),
    (re.compile(r"\byou're\b", re.I), "the user is"),
    (re.compile(r"\byour\b", re.I), "the user's"),
    (re.compile(r"\byou\b", re.I), "the user"),
    (re.compile(r"你们|您|你"), "用户"),
]


# How the user feels or how things go: the answer is talk ("Tired but good.").
_HOW_IT_GOES = re.compile(
    r"\bfeel(?:s|ing)?\b|\bhow(?:'s| (?:are|is|was|were)) (?:you|things|it|everything|life)\b"
    r"|\bgoing\?$|感觉|心情|怎么样|还好吗",
    re.IGNORECASE,
)
_ASKS_TASTE = re.compile(r"\b(?:like|prefer|favou?rite|rather)\b|喜欢|偏好|更爱", re.IGNORECASE)


def asked(text: str) -> str:
    """The closing question of an assistant's turn when it asks for something (not a yes-or-no
    question, nor how things go), or ""."""
    said = sentences(text)
    if not said or not _WH_QUESTION.match(said[-1]) or _HOW_IT_GOES.search(said[-1]):
        return ""
    return said[-1]


def _answer(question: str, sentence: str, message: WindowMessage) -> list[Candidate]:
    """A short reply to ``question`` that no rule reads, kept with the question ("Where will it
    be deployed? Vercel."), when it answers with something: a name, a number or date, a
    habit; not a reaction ("Pretty good!")."""
    answer = _DISCOURSE.sub("", sentence).strip()
    words = answer.split()
    too_long = len(answer) > 30 if _CJK.search(answer) else len(words) > 8
    if not answer or too_long or not _is_statement(answer):
        return []
    first = _WORDS.match(answer.lower())
    dated = resolve(answer, message.sent_at)
    reference = message.sent_at.date() if message.sent_at else None
    if (
        kind_by_definition(answer) == Kind.FACT
        and not _strong(answer, dated, reference)
        and (_CJK.search(answer) or first is None or first.group(0) in _COMMON_STARTS)
    ):
        return []
    for you, user in _YOU_ASKED:
        question = you.sub(user, question)
    # Asked what the user likes or prefers, the answer is a preference.
    kind = Kind.PREFERENCE if _ASKS_TASTE.search(question) else Kind.FACT
    return [
        Candidate(
            kind=kind,
            content=f"{question} {clean_content(dated.text)}"[:MAX_CONTENT_CHARS],
            message_ids=[message.id],
            quote=sentence,
            confidence=settings.MEMORY_DEFAULT_CONFIDENCE,
            event_date=dated.date,
        )
    ]


class RulesExtractor:
    """Every human's statements, and what the user adopted of the assistant's.

    A message from the account's user is read as the user's own ("Went to
    ..."); one from another human names them ("Mia went to ..."). An
    assistant turn yields nothing unless the next user message accepts it.
    """

    name = "rules"

    def extract(self, messages: list[WindowMessage], summary: str = "") -> list[Candidate]:
        candidates: list[Candidate] = []
        previous_assistant: WindowMessage | None = None
        for message in messages:
            if message.role == "assistant":
                previous_assistant = message
                continue
            if message.role != "user":
                continue
            speaker = "" if message.is_account_user else (message.speaker or "Someone")
            adopted: Candidate | None = None
            if previous_assistant is not None and not speaker:
                message = replace(message, content=counter_offer(message.content))
                adopted = adopted_candidate(previous_assistant, message)
                if adopted is not None:
                    candidates.append(adopted)
            question = (
                asked(previous_assistant.content) if previous_assistant and not speaker else ""
            )
            previous_assistant = None
            request: Candidate | None = None
            going_on: Candidate | None = None
            after_problem = False
            previous = ""
            named = ""
            for sentence in sentences(message.content):
                if adopted is not None and sentence.endswith(adopted.quote):
                    continue  # The decision the reply states, read already.
                if taken_back := retracted(sentence).casefold():
                    candidates = [c for c in candidates if taken_back not in c.content.casefold()]
                    continue
                if going_on is not None and _goes_on(going_on, sentence):
                    # "Lesson learned: a backup … isn't a backup. It has to run automatically."
                    said = _third_person_start(resolve(sentence, message.sent_at).text, "")
                    going_on.content = f"{going_on.content}. {clean_content(said)}"[
                        :MAX_CONTENT_CHARS
                    ]
                    going_on.quote = f"{going_on.quote} {sentence}"
                    going_on = None
                    continue
                if after_problem and _CIRCUMSTANCE.search(sentence):
                    continue  # How the failure just told came about: part of the report.
                after_problem = rejection(Kind.FACT, sentence) == REASON_ONE_OFF_PROBLEM
                sentence, named = _pronoun_named(
                    sentence, named, just_named=bool(named) and named in previous
                )
                previous = sentence
                found = sentence_candidates(
                    sentence,
                    message_ids=[message.id],
                    speaker=speaker,
                    sent_at=message.sent_at,
                    named=named,
                )
                if question and not found:
                    found = _answer(question, sentence, message)
                question = ""  # Only the reply's first sentence answers.
                if request is not None and [c.tags for c in found] == [[ANSWERS]]:
                    # A request about answers that goes on in the next sentence is one request.
                    request.content = f"{request.content} {found[0].content}"[:MAX_CONTENT_CHARS]
                    request.quote = f"{request.quote} {sentence}"
                    continue
                request = found[0] if [c.tags for c in found] == [[ANSWERS]] else None
                going_on = found[-1] if found else None
                candidates.extend(found)
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
