"""A loopback stand-in for the Anthropic Messages API, for running the real Claude Code in tests.

Run: `python -m tests.e2e.messages_api PORT SCRIPT LOG`. Each request that offers Claude Code's
main tools gets the next turn of SCRIPT (a JSON list: `{"tool_use": {"name", "input"}}`,
`{"text": ...}`, or `{"write_plan": text}`, a `Write` of the plan file Claude Code named in its
request), streamed as the API streams it; any other request (a title, a summary) gets "ok". Every
request's messages are appended to LOG as one JSON line, so a test reads the tool results
Claude Code sent back. It stands in for the network edge only: Claude Code itself runs as is.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

_PLAN_FILE = re.compile(r"(/[^\s\"'`]*\.claude/plans/[^\s\"'`]*?\.md)")


def create_app(script: list[dict[str, Any]], log_path: str) -> Starlette:
    turns = itertools.count()

    def reply_for(body: dict[str, Any]) -> dict[str, Any]:
        tools = {tool.get("name") for tool in body.get("tools", [])}
        if "Bash" not in tools:
            return {"text": "ok"}
        index = next(turns)
        reply: dict[str, Any] = script[index] if index < len(script) else {"text": "done"}
        if "write_plan" in reply:
            path = _PLAN_FILE.findall(json.dumps(body))[0]
            return {
                "tool_use": {
                    "name": "Write",
                    "input": {"file_path": path, "content": reply["write_plan"]},
                }
            }
        return reply

    async def messages(request: Request) -> Response:
        body = await request.json()
        async with await anyio.open_file(log_path, "a", encoding="utf-8") as log:
            await log.write(json.dumps(body["messages"]) + "\n")
        reply = reply_for(body)
        if "tool_use" in reply:
            block = {
                "type": "tool_use",
                "id": f"toolu_{id(reply)}",
                "name": reply["tool_use"]["name"],
                "input": {},
            }
            delta = {
                "type": "input_json_delta",
                "partial_json": json.dumps(reply["tool_use"]["input"]),
            }
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": reply["text"]}
            stop = "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 5}
        message = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
        }
        events: list[dict[str, Any]] = [
            {
                "type": "message_start",
                "message": {**message, "content": [], "stop_reason": None, "usage": usage},
            },
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop},
                "usage": {"output_tokens": 5},
            },
            {"type": "message_stop"},
        ]

        def stream() -> Iterator[str]:
            for event in events:
                yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def anything_else(request: Request) -> Response:
        return JSONResponse(
            {"input_tokens": 10} if request.url.path.endswith("count_tokens") else {}
        )

    return Starlette(
        routes=[
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/{path:path}", anything_else, methods=["GET", "POST", "PUT", "HEAD"]),
        ]
    )


if __name__ == "__main__":
    port, script_path, log_path = sys.argv[1:4]
    with open(script_path, encoding="utf-8") as source:
        app = create_app(json.load(source), log_path)
    uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning")
