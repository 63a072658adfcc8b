"""A2A's `ListTasks`: its parameters as a history query of the store, and a page as its answer.

The `a2a` extra. The tasks are the requests asked over A2A (sessions `a2a:...`), read from the
store's history with the pending ones included, so every node sharing the store lists the same
tasks: a token's own (the ones it asked), or an admin's every one. They come newest change first
(the status timestamp: when the request settled, else when it was asked; ties: newest asked
first), as A2A orders them. Each filter is the store's:

    contextId             the session `a2a:<contextId>`
    status                the request's state (`STATE_OF`); a state no task of the inbox is
                          ever in (`submitted`, `input-required`, ...) lists nothing
    statusTimestampAfter  changed at or after that instant
    pageSize              1 to 100, 50 by default
    pageToken             the store's history cursor: opaque, and stable (a task that changes
                          while a client pages moves to the top, never repeated below)

`historyLength` and `includeArtifacts` (off by default, as A2A says) shape each task. A
parameter out of range, an unknown state or a page token the host did not make is A2A's
`InvalidParamsError`, with the code `BAD_REQUEST` in its details.
"""

from __future__ import annotations

from datetime import UTC

from a2a.types import ListTasksRequest, ListTasksResponse, TaskState
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE, MAX_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.a2a.naming import CONTEXT_PREFIX
from user_questions.host.a2a.tasks import STATE_OF, session_of, task_of
from user_questions.host.stores import HistoryPage, HistoryQuery, HistoryStore
from user_questions.outcomes import RequestState

__all__ = ["list_tasks", "tasks_query"]

_REQUEST_STATE_OF = {task: request for request, task in STATE_OF.items()}
"""The state of a request in each A2A state a task of the inbox may be in."""


def _page_size(params: ListTasksRequest) -> int:
    return params.page_size if params.HasField("page_size") else DEFAULT_LIST_TASKS_PAGE_SIZE


def _invalid(message: str) -> InvalidParamsError:
    return InvalidParamsError(message, {"code": str(ErrorCode.BAD_REQUEST)})


def tasks_query(params: ListTasksRequest, asked_by: str | None) -> HistoryQuery | None:
    """The history query `params` ask for, of the tasks asked by `asked_by` (`None`: every
    task, an admin's view); `None` when they ask for a state no task of the inbox is ever in.

    Raises:
        InvalidParamsError: for a page size out of range, a negative history length or an
            unknown state.
    """
    size = _page_size(params)
    if not 1 <= size <= MAX_LIST_TASKS_PAGE_SIZE:
        raise _invalid(f"pageSize must be from 1 to {MAX_LIST_TASKS_PAGE_SIZE}, got {size}")
    if params.HasField("history_length") and params.history_length < 0:
        raise _invalid(f"historyLength must not be negative, got {params.history_length}")
    if params.status not in TaskState.values():
        raise _invalid(f"status {params.status} is no task state")
    state: RequestState | None = None
    if params.status != TaskState.TASK_STATE_UNSPECIFIED:
        if params.status not in _REQUEST_STATE_OF:
            return None
        state = _REQUEST_STATE_OF[params.status]
    after = params.status_timestamp_after
    return HistoryQuery(
        session=session_of(params.context_id) if params.context_id else None,
        session_prefix=CONTEXT_PREFIX,
        outcome=state,
        asked_by=asked_by,
        pending=True,
        changed_after=after.ToDatetime(UTC) if params.HasField("status_timestamp_after") else None,
        before=params.page_token or None,
        limit=size,
        count=True,
    )


async def list_tasks(
    store: HistoryStore, params: ListTasksRequest, asked_by: str | None
) -> ListTasksResponse:
    """The page of tasks `params` ask for, of those asked by `asked_by` (`None`: every one).

    Raises:
        InvalidParamsError: for a parameter `tasks_query` refuses, or a page token this host
            did not make.
    """
    query = tasks_query(params, asked_by)
    if query is None:
        return ListTasksResponse(page_size=_page_size(params), total_size=0)
    try:
        page = await store.history(query)
    except UserQuestionError as error:
        if error.code != ErrorCode.BAD_REQUEST:
            raise
        raise _invalid(
            f"invalid pageToken {params.page_token[:80]!r}; pass the nextPageToken of a "
            "previous page"
        ) from None
    return _response(page, params, query.limit)


def _response(page: HistoryPage, params: ListTasksRequest, size: int) -> ListTasksResponse:
    length = params.history_length if params.HasField("history_length") else None
    response = ListTasksResponse(
        next_page_token=page.next or "", page_size=size, total_size=page.total or 0
    )
    for record in page.records:
        task = task_of(record, history_length=length)
        if not params.include_artifacts:
            task.ClearField("artifacts")
        response.tasks.append(task)
    return response
