from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django_q.models import Schedule

from conversations.extraction import ExtractionFailed, WindowMessage
from conversations.extraction.llm import LlmExtractor, candidate_from_item, parse_answer
from conversations.extraction.runs import execute_run, retry_schedule_name
from conversations.models import Conversation, ExtractionRun, Message, RunStatus
from memories.models import Memory
from tests.extraction_helpers import conversation_with


class FakeOpenAI(ThreadingHTTPServer):
    """An OpenAI-compatible chat endpoint answering what the test sets."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer: str = '{"memories": []}'
        self.status = 200
        self.delay = 0.0
        self.requests: list[dict[str, Any]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        self.server.requests.append(
            {
                "path": self.path,
                "auth": self.headers.get("Authorization"),
                "body": json.loads(self.rfile.read(length)),
            }
        )
        time.sleep(self.server.delay)
        if self.server.status != 200:
            body = b'{"error": {"message": "upstream exploded"}}'
        else:
            body = json.dumps(
                {"choices": [{"message": {"role": "assistant", "content": self.server.answer}}]}
            ).encode()
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def llm_server(settings: Any) -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.MEMORY_EXTRACTOR = "llm"
    settings.EXTRACTION_LLM_URL = server.url
    settings.EXTRACTION_LLM_API_KEY = "test-key"
    settings.EXTRACTION_LLM_TIMEOUT = 1.0
    yield server
    server.shutdown()
    server.server_close()


GOOD = {
    "memories": [
        {
            "kind": "preference",
            "content": "Prefers Vue over React",
            "about": "user",
            "tags": ["frontend"],
            "confidence": 0.9,
            "messages": [1],
            "quote": "I prefer Vue over React",
        },
        {
            "kind": "discovery",
            "content": "The project stores surveys in CGCS2000",
            "about": "project",
            "messages": [1],
        },
    ]
}
MESSAGES = [
    WindowMessage(
        id=11,
        position=1,
        role="user",
        content="I prefer Vue over React, and my password is hunter2!",
    )
]


def _extractor(server: FakeOpenAI) -> LlmExtractor:
    return LlmExtractor(url=server.url, model="test-model", api_key="test-key", timeout=1.0)


def test_good_json(llm_server: FakeOpenAI) -> None:
    llm_server.answer = json.dumps(GOOD)
    candidates = _extractor(llm_server).extract(MESSAGES)
    assert [(c.kind, c.content) for c in candidates] == [
        ("preference", "Prefers Vue over React"),
        ("fact", "The project stores surveys in CGCS2000"),
    ]
    assert candidates[0].message_ids == [11] and candidates[0].quote == "I prefer Vue over React"
    assert candidates[0].subject == "preference:frontend framework"
    assert candidates[1].about_project and candidates[1].importance == 0.8
    request = llm_server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["auth"] == "Bearer test-key"
    sent = request["body"]["messages"][1]["content"]
    assert "hunter2" not in sent and "[redacted" in sent


@pytest.mark.parametrize(
    "answer",
    [
        "```json\n" + json.dumps(GOOD) + "\n```",
        "Here you go:\n" + json.dumps(GOOD) + "\nLet me know if you need more.",
        json.dumps(GOOD["memories"]),
        # Cut short mid-item: the complete items are kept.
        json.dumps(GOOD)[:-40],
    ],
    ids=["fenced", "surrounded", "bare-list", "truncated"],
)
def test_answers_are_read_robustly(answer: str) -> None:
    items = parse_answer(answer)
    assert items[0]["content"] == "Prefers Vue over React"


@pytest.mark.django_db
def test_garbage_fails_the_run_keeps_the_raw_output_and_is_retried(
    alice: Any, llm_server: FakeOpenAI
) -> None:
    llm_server.answer = "I'm sorry, I cannot help with that. Token sk-abcdefghijklmnopqrstuvwxyz123"
    conversation = conversation_with(alice, ("user", "I prefer Vue over React for the frontend"))
    run = ExtractionRun.objects.create(conversation=conversation, trigger="manual", extractor="llm")
    failed = execute_run(run.pk)
    assert failed.status == RunStatus.FAILED
    assert "could not be read" in failed.error
    assert failed.raw_output.startswith("I'm sorry, I cannot help with that.")
    assert "sk-abc" not in failed.raw_output
    assert Schedule.objects.filter(name=retry_schedule_name(run.pk)).exists()
    assert conversation.messages.get().pk and not Memory.objects.exists()

    llm_server.answer = json.dumps(GOOD)
    retried = execute_run(run.pk)
    assert (retried.status, retried.attempts, retried.created) == (RunStatus.SUCCEEDED, 2, 2)
    assert retried.raw_output == "" and retried.error == ""


@pytest.mark.django_db
def test_server_error_fails_the_run_with_the_body(alice: Any, llm_server: FakeOpenAI) -> None:
    llm_server.status = 500
    conversation = conversation_with(alice, ("user", "I prefer Vue over React for the frontend"))
    run = ExtractionRun.objects.create(conversation=conversation, trigger="manual", extractor="llm")
    failed = execute_run(run.pk)
    assert failed.status == RunStatus.FAILED
    assert "HTTP 500" in failed.error
    assert "upstream exploded" in failed.raw_output


def test_timeout(llm_server: FakeOpenAI) -> None:
    llm_server.delay = 2.0
    extractor = LlmExtractor(url=llm_server.url, model="m", timeout=0.3)
    with pytest.raises(ExtractionFailed, match=r"did not answer within 0\.3 s"):
        extractor.extract(MESSAGES)


@pytest.mark.django_db
def test_a_failing_endpoint_is_asked_once_a_run_the_runs_backoff_retries(
    alice: Any, llm_server: FakeOpenAI
) -> None:
    """One retry layer: the SDK does not retry the extractor's call, the run's schedule does."""
    llm_server.status = 503
    conversation = conversation_with(alice, ("user", "I prefer Vue over React for the frontend"))
    run = ExtractionRun.objects.create(conversation=conversation, trigger="manual", extractor="llm")

    failed = execute_run(run.pk)

    assert failed.status == RunStatus.FAILED and "HTTP 503" in failed.error
    assert len(llm_server.requests) == 1
    assert Schedule.objects.filter(name=retry_schedule_name(run.pk)).exists()


def test_no_key_no_authorization_header(llm_server: FakeOpenAI) -> None:
    LlmExtractor(url=llm_server.url, model="m", timeout=1.0).extract(MESSAGES)
    assert llm_server.requests[0]["auth"] is None


def test_unreachable_endpoint() -> None:
    extractor = LlmExtractor(url="http://127.0.0.1:9/v1", model="m", timeout=0.5)
    with pytest.raises(ExtractionFailed, match="could not be reached"):
        extractor.extract(MESSAGES)


def test_the_prompt_names_participants_and_dates_and_answers_become_dated_named_memories(
    alice: Any, llm_server: FakeOpenAI
) -> None:
    conversation = Conversation.objects.create(
        owner=alice,
        external_id="weekend",
        participants=[
            {"name": "Mia", "role": "user", "is_account_user": True},
            {"name": "Jon", "role": "user"},
        ],
    )
    jon_said = datetime(2023, 5, 8, 10, tzinfo=UTC)
    mia_said = datetime(2023, 5, 9, 18, tzinfo=UTC)
    Message.objects.bulk_create(
        [
            Message(
                conversation=conversation,
                role="user",
                speaker="Jon",
                content="I went to a pottery class yesterday, it was great fun.",
                external_id="1",
                position=1,
                sent_at=jon_said,
            ),
            Message(
                conversation=conversation,
                role="user",
                content="I have been climbing for three years, mostly indoors.",
                external_id="2",
                position=2,
                sent_at=mia_said,
            ),
        ]
    )
    llm_server.answer = json.dumps(
        {
            "memories": [
                {
                    "kind": "fact",
                    "content": "Jon went to a pottery class on 7 May 2023",
                    "person": "Jon",
                    "event_date": "2023-05-07",
                    "messages": [1],
                },
                {
                    "kind": "fact",
                    "content": "Has been climbing since 2020",
                    "person": "Mia",
                    "event_date": "2020",
                    "messages": [2],
                },
                # A named subject the content leaves out is put in front of it.
                {"kind": "fact", "content": "Enjoys pottery", "person": "Jon", "messages": [1]},
            ]
        }
    )
    run = ExtractionRun.objects.create(conversation=conversation, trigger="manual", extractor="llm")
    assert execute_run(run.pk).status == RunStatus.SUCCEEDED

    prompt = llm_server.requests[0]["body"]["messages"][1]["content"]
    assert "Participants:\n- Jon (another person" in prompt
    assert "- Mia (the account's user" in prompt
    assert "[1] 2023-05-08 (Monday) Jon: I went to a pottery class yesterday" in prompt
    assert "[2] 2023-05-09 (Tuesday) Mia: I have been climbing" in prompt
    system = llm_server.requests[0]["body"]["messages"][0]["content"]
    assert '"event_date"' in system and '"person"' in system

    pottery = Memory.objects.get(content="Jon went to a pottery class on 7 May 2023")
    assert pottery.metadata["speaker"] == "Jon"
    assert pottery.metadata["event_date"] == "2023-05-07"
    assert pottery.valid_from == jon_said
    climbing = Memory.objects.get(content="Has been climbing since 2020")
    assert "speaker" not in climbing.metadata  # Mia is the account's user.
    assert climbing.metadata["event_date"] == "2020-01-01"
    assert climbing.valid_from == mia_said
    enjoys = Memory.objects.get(content="Jon: Enjoys pottery")
    assert enjoys.metadata["speaker"] == "Jon" and "event_date" not in enjoys.metadata


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2023-05-07", date(2023, 5, 7)),
        ("2023-05", date(2023, 5, 1)),
        ("2023", date(2023, 1, 1)),
        ("2023-02-30", None),
        ("soon", None),
        (None, None),
    ],
)
def test_event_dates_are_read_leniently(value: Any, expected: date | None) -> None:
    item = {"content": "Went to Lyon", "event_date": value, "messages": [1]}
    candidate = candidate_from_item(item, MESSAGES)
    assert candidate is not None and candidate.event_date == expected


@pytest.mark.django_db
def test_a_huge_answer_fails_at_once_with_its_start_kept(
    alice: Any, llm_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 42, item 7: a 30 MB answer was read and redacted whole, past the run's time."""
    from conversations.extraction import runs

    redacted: list[int] = []
    redact = runs.redact

    def measured_redact(text: str, *args: Any) -> Any:
        redacted.append(len(text))
        return redact(text, *args)

    monkeypatch.setattr(runs, "redact", measured_redact)
    llm_server.answer = '{"memories": [' + '{"content": "x"}, ' * 200_000 + "]}"
    conversation = conversation_with(alice, ("user", "I prefer Vue over React for the frontend"))
    run = ExtractionRun.objects.create(conversation=conversation, trigger="manual", extractor="llm")
    failed = execute_run(run.pk)
    assert failed.status == RunStatus.FAILED
    assert "over 1,000,000 characters" in failed.error
    assert len(failed.raw_output) == 100_000
    assert max(redacted) <= 101_000
