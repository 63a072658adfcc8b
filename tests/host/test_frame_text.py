"""The asker's replies a host writes as text (`host/_frame_text.py`) read back through their
model as the model's own JSON, whatever the rpcId and the answer hold and however the request
ended. (The page's frames are checked the same way in tests/host/test_hub.py.)"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.host.conftest import PICK
from user_questions.frames import AskerReply, AskPending, AskSettled
from user_questions.host._frame_text import pending_reply, settled_reply
from user_questions.host.stores import NewQuestion, Settlement
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Outcome, Surface
from user_questions.types import AskUserQuestionAnswer

pytestmark = pytest.mark.anyio

AWKWARD = 'quote " backslash \\ newline \n tab \t bell \x07 é 漢字 🙂 \u2028 </script>'


def test_the_pending_reply_is_the_models_json() -> None:
    text = pending_reply(f"r {AWKWARD}")
    expected = AskerReply(rpc_id=f"r {AWKWARD}", payload=AskPending())
    assert AskerReply.model_validate_json(text) == expected
    assert json.loads(text) == json.loads(expected.model_dump_json())


@pytest.mark.parametrize("ending", list(Outcome))
async def test_every_settled_reply_is_the_models_json(tmp_path: Path, ending: Outcome) -> None:
    answer = AskUserQuestionAnswer.model_validate(
        {"answers": [{"id": PICK.id, "selected": ["a"], "custom": AWKWARD}]}
    )
    settlement = Settlement(
        ending, answer if ending is Outcome.ANSWERED else None, Surface.WEB, by=AWKWARD
    )
    rpc_id = f"r {AWKWARD}"
    async with SQLiteStore(tmp_path / "host.db") as store:
        await store.submit(NewQuestion(rpc_id, f"s {AWKWARD}", [PICK], datetime.now(UTC)))
        record = await store.settle(rpc_id, settlement)
    assert record is not None
    text = settled_reply(record)
    expected = AskerReply(
        rpc_id=rpc_id,
        payload=AskSettled(
            outcome=ending,
            answer=None if record.answer is None else record.answer.model_dump(mode="json"),
        ),
    )
    assert AskerReply.model_validate_json(text) == expected
    assert json.loads(text) == json.loads(expected.model_dump_json())
    assert ("answer" in json.loads(text)["payload"]) is (ending is Outcome.ANSWERED)
