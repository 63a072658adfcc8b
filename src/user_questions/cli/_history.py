"""`uq history`: settled questions, newest first, with their answers and who gave them.

Reads either a running host, by URL (`--url`, else `$UQ_URL`; through `GET /api/history`, extra
`web`), or the host's store beside it (`--store`, else `$UQ_STORE`, else the default store;
`_beside`). Both give the same `HistoryEntry` objects, so the output is the same: without `--json` a
short block per request for people; with `--json`, one `HistoryEntry` object per line (the objects
`GET /api/history` lists, without `rendered`), for scripts. Exit statuses: 0 done, 1 the store or
the host cannot be reached, 2 bad input (an unknown outcome, a bad limit, an unusable store, both
`--store` and `--url`).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from datetime import datetime
from typing import Annotated

import anyio
from cyclopts import Parameter

from user_questions._reading.wire import parse_questions
from user_questions.cli._beside import local_time, with_store
from user_questions.cli._host_client import CA_HELP, HostClient, chosen_url, host_address
from user_questions.cli._pending import asker_text, one_line
from user_questions.cli._serve import fail
from user_questions.cli._store_option import OldDb, StoreOption, chosen_store, given_store
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores import HistoryQuery, HistoryStore
from user_questions.host.web.history import MAX_LIMIT, HistoryEntry, entry_of, history_query
from user_questions.outcomes import Outcome
from user_questions.types import AskUserQuestionAnswer

__all__ = ["history"]

_URL_HELP = "URL of a running host to read (its ?token= is used). Default: $UQ_URL, else --store."
_BAD_INPUT = frozenset({ErrorCode.BAD_REQUEST, ErrorCode.BAD_TOKEN})


def history(
    *,
    store: StoreOption = None,
    db: OldDb = None,
    url: Annotated[str | None, Parameter(help=_URL_HELP)] = None,
    token: str | None = None,
    ca: Annotated[str | None, Parameter(help=CA_HELP)] = None,
    json_: Annotated[bool, Parameter(name="--json", negative="")] = False,
    session: str | None = None,
    outcome: str | None = None,
    search: str | None = None,
    by: str | None = None,
    limit: int = 20,
    host: Annotated[str | None, Parameter(show=False)] = None,
) -> None:
    """Print settled questions, newest first, with their answers and who gave them.

    Parameters
    ----------
    token
        With --url: the host's token, or a named token. Default: the URL's, else $UQ_TOKEN.
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
    host
        The old name of --url (deprecated).
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
    given_url = chosen_url("history", url, host)
    named_store = given_store("history", store, db)
    if named_store is not None and given_url is not None:
        fail("history", "give --store (a store) or --url (a running host), not both", 2)
    if named_store is None and (given_url or os.environ.get("UQ_URL")):
        entries = _from_host(given_url or os.environ["UQ_URL"], token, ca, query, limit)
    else:

        async def work(opened: HistoryStore) -> list[HistoryEntry]:
            return await _from_store(opened, query, limit)

        entries = with_store("history", chosen_store("history", named_store, None), work)
    if json_:
        for entry in entries:
            print(entry.model_dump_json())
        return
    if not entries:
        print("no settled questions match", file=sys.stderr)
    for entry in entries:
        print("\n".join(_block(entry)))


async def _from_store(store: HistoryStore, query: HistoryQuery, limit: int) -> list[HistoryEntry]:
    """Up to `limit` entries, reading page after page."""
    entries: list[HistoryEntry] = []
    while True:
        page = await store.history(query)
        entries += [entry_of(record) for record in page.records[: limit - len(entries)]]
        if page.next is None or len(entries) >= limit:
            return entries
        query = replace(query, before=page.next, limit=min(limit - len(entries), MAX_LIMIT))


def _from_host(
    url: str, token: str | None, ca: str | None, query: HistoryQuery, limit: int
) -> list[HistoryEntry]:
    """Up to `limit` entries from a running host, page after page (without `rendered`)."""
    parameters = {
        "session": query.session or "",
        "outcome": query.outcome or "",
        "q": " ".join(query.terms),
        "by": query.by or "",
    }

    async def read() -> list[HistoryEntry]:
        entries: list[HistoryEntry] = []
        async with HostClient(host_address(url, token, ca)) as client:
            cursor = ""
            while True:
                size = min(limit - len(entries), MAX_LIMIT)
                page = await client.history({**parameters, "before": cursor, "limit": str(size)})
                entries += [item.model_copy(update={"rendered": None}) for item in page.items]
                if page.next is None or len(entries) >= limit:
                    return entries[:limit]
                cursor = page.next

    try:
        return anyio.run(read)
    except UserQuestionError as error:
        fail("history", error.message, 2 if error.code in _BAD_INPUT else 1)


def _block(entry: HistoryEntry) -> list[str]:
    """A request for people: when and how it ended, who asked, then each question's answer."""
    how = str(entry.outcome)
    if entry.by and entry.outcome in (Outcome.ANSWERED, Outcome.DISMISSED):
        how += f" by {entry.by}"
    if entry.via:
        how += f" via {entry.via}"
    settled = local_time(datetime.fromisoformat(entry.settled_at))
    lines = [f"{settled}  {how}  ·  session {asker_text(entry.session_id, entry.origin)}"]
    if entry.note:
        lines.append(f"  note: {one_line(entry.note)}")
    answer = None if entry.answer is None else AskUserQuestionAnswer.model_validate(entry.answer)
    answers = {} if answer is None else {item.id: item for item in answer.answers}
    for question in parse_questions({"questions": entry.questions}):
        header = f"[{question.header}] " if question.header else ""
        lines.append(f"  {header}{question.question}")
        if answer is None:
            continue
        item = answers.get(question.id)
        chosen = [*item.selected] if item is not None else []
        if item is not None and item.custom is not None:
            chosen.append(json.dumps(item.custom, ensure_ascii=False))
        lines.append(f"    → {', '.join(chosen) if chosen else '(skipped)'}")
    return [*lines, ""]
