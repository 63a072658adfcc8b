"""`uq a2a watch AGENT_URL --task ID`: an A2A agent's pauses for a person, answered in the inbox.

The `a2a` extra. Follows the task through the agent's Agent Card (`AGENT_URL`, where
`/.well-known/agent-card.json` is), asks each `input-required` and `auth-required` in the inbox of
the host at `--url` (else `$UQ_URL`: the agents' line of `uq serve`, an asker's token), and sends
each answer back to the agent on the same task (`integrations.a2a.watch_task`). It prints the state
the task ended in (`completed`, `failed`, ...); `--json` prints the ended task as A2A JSON instead.

Exit status: 0 the task completed; 5 it ended otherwise (failed, canceled, rejected); 3 a card was
dismissed and 4 one timed out (the task is left waiting: nothing is sent for them); 1 the agent or
the host could not be reached or refused; 2 bad input; 128+N a signal (the card is withdrawn).
"""

from __future__ import annotations

from typing import Annotated

import anyio
from cyclopts import App, Parameter

from user_questions.cli._host_client import CA_HELP, URL_HELP, HostAddress, host_address
from user_questions.cli._pending import TOKEN_HELP
from user_questions.cli._serve import fail
from user_questions.cli._stopping import StoppedError, until_stopped
from user_questions.errors import ErrorCode, UserQuestionError

__all__ = ["a2a_app", "watch"]

a2a_app = App(name="a2a", help="Answer A2A agents' questions from the inbox.")

_STATUS: dict[str, int] = {ErrorCode.ASK_CANCELLED: 3, ErrorCode.ASK_TIMED_OUT: 4}
_AGENT_TIMEOUT = 30.0
"""Seconds one request to the agent may take (its streams send a keep-alive more often)."""


@a2a_app.command(name="watch")
def watch(
    agent_url: str,
    /,
    *,
    task: str,
    url: Annotated[str | None, Parameter(env_var="UQ_URL", help=URL_HELP)] = None,
    token: Annotated[str | None, Parameter(help=TOKEN_HELP)] = None,
    ca: Annotated[str | None, Parameter(help=CA_HELP)] = None,
    agent_token: Annotated[str | None, Parameter(env_var="UQ_A2A_TOKEN")] = None,
    agent_header: Annotated[list[str] | None, Parameter(negative="")] = None,
    session: str | None = None,
    timeout: float | None = None,
    poll: float = 2.0,
    json: Annotated[bool, Parameter(negative="")] = False,
) -> None:
    """Follow an A2A agent's task; each time it waits for input, a person answers in the inbox.

    Exit status: 0 completed, 5 ended otherwise, 3 dismissed, 4 timed out, 1 failed,
    2 bad input.

    Parameters
    ----------
    agent_url
        The agent's base URL, where /.well-known/agent-card.json is.
    task
        The id of the agent's task to follow.
    agent_token
        A bearer token for the agent (UQ_A2A_TOKEN keeps it off the command line).
    agent_header
        A header for every request to the agent, as NAME: VALUE; repeat for several.
    session
        Session name the inbox groups the task's questions under [default: a2a-watch:TASK].
    timeout
        Seconds each question may wait for the person; then exit 4.
    poll
        Seconds between two reads of a task the agent does not stream.
    json
        Print the ended task as A2A JSON instead of its state.
    """
    try:
        import user_questions.integrations.a2a  # noqa: F401 - needs the A2A SDK
    except ImportError:
        fail("a2a", "uq a2a needs the A2A SDK: pip install 'user-questions[a2a]'", 2)
    headers = _headers(agent_token, agent_header or [])
    if not agent_url.startswith(("http://", "https://")):
        fail("a2a", f"the agent's URL must start with http:// or https://, got {agent_url!r}", 2)
    for flag, seconds in (("--timeout", timeout), ("--poll", poll)):
        if seconds is not None and not seconds > 0:
            fail("a2a", f"{flag} takes a number of seconds above 0, got {seconds:g}", 2)
    try:
        address = host_address(url, token, ca)
    except UserQuestionError as error:
        fail("a2a", error.message, 2)
    try:
        status = anyio.run(
            until_stopped,
            lambda: _watch(agent_url, task, headers, address, session, timeout, poll, json),
        )
    except StoppedError as stopped:
        raise SystemExit(128 + stopped.signum) from None
    except UserQuestionError as error:
        fail("a2a", error.message, _STATUS.get(error.code, 1))
    raise SystemExit(status)


def _headers(agent_token: str | None, given: list[str]) -> dict[str, str]:
    headers = {} if agent_token is None else {"Authorization": f"Bearer {agent_token}"}
    for header in given:
        name, colon, value = header.partition(":")
        if not colon or not name.strip():
            fail("a2a", f"--agent-header {header!r} is not NAME: VALUE", 2)
        headers[name.strip()] = value.strip()
    return headers


async def _watch(
    agent_url: str,
    task_id: str,
    headers: dict[str, str],
    address: HostAddress,
    session: str | None,
    question_timeout: float | None,
    poll: float,
    as_json: bool,
) -> int:
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, create_client
    from a2a.types import TaskState
    from a2a.utils.errors import A2AError
    from google.protobuf import json_format

    from user_questions.asker import connect
    from user_questions.integrations.a2a import state_name, watch_task

    async with httpx.AsyncClient(headers=headers, timeout=_AGENT_TIMEOUT) as http:
        try:
            card = await A2ACardResolver(http, agent_url).get_agent_card()
            client = await create_client(card, client_config=ClientConfig(httpx_client=http))
        except (A2AError, ValueError) as error:
            raise UserQuestionError(
                f"cannot use the agent's card at {agent_url}: {error}", ErrorCode.HOST_UNREACHABLE
            ) from None
        name = card.name or "the agent"
        asking = connect(
            address.base,
            session=session or f"a2a-watch:{task_id}",
            token=address.token,
            client=name[:128],
            ca=address.ca,
        )
        async with asking as asker:
            ended = await watch_task(
                client,
                task_id,
                asker,
                agent=name,
                question_timeout=question_timeout,
                poll_interval=poll,
            )
    state = ended.status.state
    print(json_format.MessageToJson(ended) if as_json else state_name(state), flush=True)
    return 0 if state == TaskState.TASK_STATE_COMPLETED else 5
