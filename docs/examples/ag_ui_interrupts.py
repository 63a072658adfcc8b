"""An AG-UI agent whose run stops on interrupts, resumed with a person's answers from the inbox.

    uq serve                                    # prints the page's URL, then the agents' line:
    export UQ_URL='http://127.0.0.1:8765/?token=…'     # run it: an asker's token, never answers
    python docs/examples/ag_ui_interrupts.py

The agent is a small AG-UI server, in this file, on loopback: POST a `RunAgentInput`, read its
events as server-sent events. Its first run proposes to send an email and ends with a `tool_call`
interrupt whose schema takes `editedArgs`: the card offers "Edit and allow". Change the address to
c@d.com and allow it; the next run sends the email as changed and ends with an interrupt whose
`responseSchema` is a form (a folder to choose, days to keep). File it in Archive for 30 days;
the last run prints:
sent the email to c@d.com and filed the thread in Archive for 30 days
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
SEND = Interrupt(
    id="int-send",
    reason="tool_call",
    message="Send this email?",
    tool_call_id="tc-1",
    response_schema={
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "editedArgs": {"type": "object"}},
        "required": ["approved"],
    },
)
FILE = Interrupt(
    id="int-file",
    reason="input_required",
    message="Where should the thread go?",
    response_schema={
        "type": "object",
        "properties": {
            "folder": {"type": "string", "title": "Folder", "enum": ["Archive", "Follow-up"]},
            "days": {"type": "integer", "title": "Days to keep", "minimum": 1, "maximum": 365},
        },
        "required": ["folder", "days"],
    },
)


# -- the agent: an AG-UI server ---------------------------------------------------------------


async def run_agent(request: Request) -> StreamingResponse:
    given = RunAgentInput.model_validate(await request.json())
    encoder = EventEncoder()

    async def events() -> AsyncIterator[str]:
        yield encoder.encode(RunStartedEvent(thread_id=given.thread_id, run_id=given.run_id))
        answers = {entry.interrupt_id: entry for entry in given.resume or []}
        if not answers:  # the first run: propose the email, then stop for the person
            yield encoder.encode(
                ToolCallStartEvent(tool_call_id="tc-1", tool_call_name="sendEmail")
            )
            yield encoder.encode(ToolCallArgsEvent(tool_call_id="tc-1", delta=json.dumps(EMAIL)))
            yield encoder.encode(ToolCallEndEvent(tool_call_id="tc-1"))
            yield encoder.encode(_interrupted(given, SEND))
        elif "int-send" in answers:  # the email answered: send it as allowed, ask where to file
            send = answers["int-send"]
            payload = send.payload if send.status == "resolved" else None
            allowed = isinstance(payload, dict) and payload.get("approved") is True
            email = (payload or {}).get("editedArgs", EMAIL) if allowed else None  # a whole call
            SENT[given.thread_id] = (
                f"sent the email to {email['to']}" if email else "did not send the email"
            )
            yield encoder.encode(_interrupted(given, FILE))
        else:
            filed = answers["int-file"]
            done = [SENT.pop(given.thread_id)]
            if filed.status == "resolved" and isinstance(filed.payload, dict):
                where = filed.payload
                done.append(f"filed the thread in {where['folder']} for {where['days']} days")
            result = " and ".join(done)
            yield encoder.encode(
                RunFinishedEvent(thread_id=given.thread_id, run_id=given.run_id, result=result)
            )

    return StreamingResponse(events(), media_type=encoder.get_content_type())


SENT: dict[str, str] = {}
"""What each thread's run did with the email, until the thread is filed (the agent's memory)."""


def _interrupted(given: RunAgentInput, interrupt: Interrupt) -> RunFinishedEvent:
    outcome = RunFinishedInterruptOutcome(interrupts=[interrupt])
    return RunFinishedEvent(thread_id=given.thread_id, run_id=given.run_id, outcome=outcome)


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
