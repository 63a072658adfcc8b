"""An AG-UI agent whose run stops on interrupts, resumed with a person's answers from the inbox.

    uq serve                                    # prints the page's URL, then the agents' line:
    export UQ_URL='http://127.0.0.1:8765/?token=…'     # run it: an asker's token, never answers
    python docs/examples/ag_ui_interrupts.py

The agent is a small AG-UI server, in this file, on loopback: POST a `RunAgentInput`, read its
events as server-sent events. Its first run proposes to send an email and ends with two
interrupts (approve the tool call, confirm archiving the thread); the inbox shows both as one
request. Allow the email and say Yes; the next run, resumed with the answers, prints:
sent the email to a@b.com and archived the thread
"""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import uvicorn
from ag_ui.core import (
    Event,
    Interrupt,
    RunAgentInput,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    ToolCall,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ag_ui.core.types import FunctionCall
from ag_ui.encoder import EventEncoder
from pydantic import TypeAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from user_questions import connect
from user_questions.integrations.ag_ui import resume_interrupts

EMAIL = {"to": "a@b.com", "subject": "Hi", "body": "The build is green."}
INTERRUPTS = [
    Interrupt(
        id="int-send",
        reason="tool_call",
        message="Send this email?",
        tool_call_id="tc-1",
        response_schema={"type": "object", "properties": {"approved": {"type": "boolean"}}},
    ),
    Interrupt(id="int-archive", reason="confirmation", message="Archive the thread after it?"),
]


# -- the agent: an AG-UI server ---------------------------------------------------------------


async def run_agent(request: Request) -> StreamingResponse:
    given = RunAgentInput.model_validate(await request.json())
    encoder = EventEncoder()

    async def events() -> AsyncIterator[str]:
        yield encoder.encode(RunStartedEvent(thread_id=given.thread_id, run_id=given.run_id))
        if not given.resume:  # the first run: propose the email, then stop for the person
            yield encoder.encode(
                ToolCallStartEvent(tool_call_id="tc-1", tool_call_name="sendEmail")
            )
            yield encoder.encode(ToolCallArgsEvent(tool_call_id="tc-1", delta=json.dumps(EMAIL)))
            yield encoder.encode(ToolCallEndEvent(tool_call_id="tc-1"))
            outcome = RunFinishedInterruptOutcome(interrupts=INTERRUPTS)
            yield encoder.encode(
                RunFinishedEvent(thread_id=given.thread_id, run_id=given.run_id, outcome=outcome)
            )
            return
        answers = {entry.interrupt_id: entry for entry in given.resume}
        send, archive = answers["int-send"], answers["int-archive"]
        sent = send.status == "resolved" and send.payload == {"approved": True}
        done = [f"sent the email to {EMAIL['to']}" if sent else "did not send the email"]
        if archive.status == "resolved" and archive.payload is True:
            done.append("archived the thread")
        result = " and ".join(done)
        yield encoder.encode(
            RunFinishedEvent(thread_id=given.thread_id, run_id=given.run_id, result=result)
        )

    return StreamingResponse(events(), media_type=encoder.get_content_type())


# -- the application: runs the agent, and asks the person when it stops -------------------------

EVENT = TypeAdapter(Event)


async def run(client: httpx.AsyncClient, given: RunAgentInput) -> list[Any]:
    """One run of the agent: its events, read from the stream."""
    body = given.model_dump(mode="json", by_alias=True)
    async with client.stream("POST", "/run", json=body) as response:
        return [
            EVENT.validate_json(line.removeprefix("data: "))
            async for line in response.aiter_lines()
            if line.startswith("data: ")
        ]


async def main(base: str) -> None:
    thread = str(uuid.uuid4())
    async with httpx.AsyncClient(base_url=base) as client, connect(client="ag-ui") as asker:
        given = RunAgentInput(thread_id=thread, run_id=str(uuid.uuid4()), messages=[])
        while True:
            events = await run(client, given)
            finished = events[-1]
            if not isinstance(finished.outcome, RunFinishedInterruptOutcome):
                print(finished.result)
                return
            calls = [  # the calls the run proposed, so the cards show what they would do
                ToolCall(
                    id=event.tool_call_id,
                    function=FunctionCall(
                        name=event.tool_call_name, arguments=_args(events, event.tool_call_id)
                    ),
                )
                for event in events
                if isinstance(event, ToolCallStartEvent)
            ]
            resume = await resume_interrupts(finished.outcome.interrupts, asker, tool_calls=calls)
            given = RunAgentInput(
                thread_id=thread, run_id=str(uuid.uuid4()), messages=[], resume=resume
            )


def _args(events: list[Any], call_id: str) -> str:
    return "".join(
        e.delta for e in events if isinstance(e, ToolCallArgsEvent) and e.tool_call_id == call_id
    )


async def serve_and_run() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        app = Starlette(routes=[Route("/run", run_agent, methods=["POST"])])
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            await main(f"http://127.0.0.1:{sock.getsockname()[1]}")
            server.should_exit = True


if __name__ == "__main__":
    anyio.run(serve_and_run)
