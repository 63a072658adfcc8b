"""A loopback stand-in for OpenAI's Responses API, for running the real Codex in tests.

Run: `python -m tests.e2e.responses_api PORT SCRIPT LOG`. Each request gets the next turn of
SCRIPT (a JSON list: `{"call": {"name", "arguments"}}` for a function call, or `{"text": ...}`),
streamed as server-sent events; every request's `input` is appended to LOG as one JSON line, so a
test reads the function call outputs Codex sent back. It stands in for the network edge only.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


def create_app(script: list[dict[str, Any]], log_path: str) -> Starlette:
    turns = itertools.count()

    async def responses(request: Request) -> Response:
        body = await request.json()
        async with await anyio.open_file(log_path, "a", encoding="utf-8") as log:
            await log.write(json.dumps(body.get("input", [])) + "\n")
        index = next(turns)
        reply: dict[str, Any] = script[index] if index < len(script) else {"text": "done"}
        item: dict[str, Any]
        if "call" in reply:
            item = {
                "type": "function_call",
                "id": f"fc_{index}",
                "call_id": f"call_{index}",
                "name": reply["call"]["name"],
                "arguments": json.dumps(reply["call"]["arguments"]),
                "status": "completed",
            }
        else:
            text = {"type": "output_text", "text": reply["text"], "annotations": []}
            item = {"type": "message", "id": f"msg_{index}", "role": "assistant", "content": [text]}
        response = {"id": f"resp_{index}", "object": "response"}
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {**response, "status": "in_progress"}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {
                "type": "response.completed",
                "response": {**response, "status": "completed", "output": [item], "usage": usage},
            },
        ]

        def stream() -> Iterator[str]:
            for event in events:
                yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def anything_else(request: Request) -> Response:
        return JSONResponse({"data": [], "models": []})

    return Starlette(
        routes=[
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/{path:path}", anything_else, methods=["GET", "POST"]),
        ]
    )


if __name__ == "__main__":
    port, script_path, log_path = sys.argv[1:4]
    with open(script_path, encoding="utf-8") as source:
        app = create_app(json.load(source), log_path)
    uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning")
