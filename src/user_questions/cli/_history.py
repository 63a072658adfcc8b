"""`uq history`: settled questions, newest first, with their answers and who gave them.

Level 10. Reads the host's store beside the running host (`_beside`). Without `--json` it prints
a short block per request for people; with `--json`, one `HistoryEntry` object per line (the
objects `GET /api/history` lists, without `rendered`), for scripts. Exit statuses: 0 done, 1 the
store cannot be reached, 2 bad input (an unknown outcome, a bad limit, an unusable store).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from typing import Annotated

from cyclopts import Parameter

from user_questions.cli._beside import DB_HELP, local_time, with_store
from user_questions.cli._serve import fail
from user_questions.errors import UserQuestionError
from user_questions.host.history import MAX_LIMIT, entry_of, history_query
from user_questions.host.stores import HistoryQuery, Store, StoredQuestion

__all__ = ["history"]

_DESCRIBED = {
    "answered": "answered",
    "cancelled": "dismissed",
    "withdrawn": "withdrawn",
    "timed-out": "timed out",
}


def history(
    *,
    db: Annotated[str | None, Parameter(env_var="UQ_DB", help=DB_HELP)] = None,
    json_: Annotated[bool, Parameter(name="--json", negative="")] = False,
    session: str | None = None,
    outcome: str | None = None,
    search: str | None = None,
    by: str | None = None,
    limit: int = 20,
) -> None:
    """Print settled questions, newest first, with their answers and who gave them.

    Parameters
    ----------
    json_
        One JSON object per question and line, for scripts.
    session
        Only this session's questions (an agent's id, or an asker's session name).
    outcome
        Only questions that ended this way: answered, dismissed, withdrawn or timed-out.
    search
        Only questions whose text (questions, headers, details, options, typed answers) holds
        every one of these words, ignoring case.
    by
        Only questions answered or dismissed by this person (a token's name, or owner).
    limit
        How many questions to print at most.
    """
    if limit < 1:
        fail("history", f"--limit must be at least 1, got {limit}", 2)
    try:
        query = history_query(
            session=session,
            outcome=outcome,
            search=search,
            by=by,
            limit=min(limit, MAX_LIMIT),
        )
    except UserQuestionError as error:
        fail("history", error.message, 2)

    async def work(store: Store) -> list[StoredQuestion]:
        return await _read(store, query, limit)

    records = with_store("history", db, work)
    if json_:
        for record in records:
            print(entry_of(record).model_dump_json())
        return
    if not records:
        print("no settled questions match", file=sys.stderr)
    for record in records:
        print("\n".join(_block(record)))


async def _read(store: Store, query: HistoryQuery, limit: int) -> list[StoredQuestion]:
    """Up to `limit` records, reading page after page."""
    records: list[StoredQuestion] = []
    while True:
        page = await store.history(query)
        records += page.records[: limit - len(records)]
        if page.next is None or len(records) >= limit:
            return records
        query = replace(query, before=page.next, limit=min(limit - len(records), MAX_LIMIT))


def _block(record: StoredQuestion) -> list[str]:
    """A request for people: when and how it ended, who asked, then each question's answer."""
    how = _DESCRIBED.get(record.state, record.state)
    if record.settled_by and record.state in ("answered", "cancelled"):
        how += f" by {record.settled_by}"
    if record.settled_via:
        how += f" via {record.settled_via}"
    lines = [f"{local_time(record.settled_at)}  {how}  ·  session {record.session_id}"]
    answers = {} if record.answer is None else {item.id: item for item in record.answer.answers}
    for question in record.questions:
        header = f"[{question.header}] " if question.header else ""
        lines.append(f"  {header}{question.question}")
        if record.answer is None:
            continue
        item = answers.get(question.id)
        chosen = [*item.selected] if item is not None else []
        if item is not None and item.custom is not None:
            chosen.append(json.dumps(item.custom, ensure_ascii=False))
        lines.append(f"    → {', '.join(chosen) if chosen else '(skipped)'}")
    return [*lines, ""]
