"""Reading what clients send a host: WebSocket frames, bounded in bytes, and JSON into frames.

Level 8: imports Starlette, `frames`, `_wire` and `errors`. Both WebSocket protocols (the page's
`/ws` and the asker's `/ws/ask`) and `POST /api/respond` read their input here, so a frame is
limited, parsed and refused the same way everywhere:

- `receive_texts(websocket)` yields each frame's text; a frame over `MAX_FRAME_BYTES` (counted in
  UTF-8 bytes, as the asker counts what it sends) closes the connection with code 1009;
- `load`, `decode` and `validate` turn text into a frame model, or raise `BAD_REQUEST` with a
  one-line message; `rpc_id_of` finds the rpcId of a frame that failed, to answer it by name.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.websockets import WebSocket

from user_questions._wire import describe_validation_error
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import MAX_FRAME_BYTES, Frame, JSONObject, PongFrame

__all__ = [
    "PONG",
    "TOO_LARGE_CLOSE_CODE",
    "decode",
    "load",
    "receive_texts",
    "rpc_id_of",
    "validate",
]

PONG = PongFrame().model_dump_json()
"""The host's answer to a `ping`, on either protocol."""
TOO_LARGE_CLOSE_CODE = 1009
"""The WebSocket close code of a connection that sent a frame over `MAX_FRAME_BYTES`."""

M = TypeVar("M", bound=BaseModel)


async def receive_texts(websocket: WebSocket) -> AsyncIterator[str]:
    """The text of each frame until the peer leaves; an oversized frame ends the connection."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        text: str | None = message.get("text")
        data: bytes = message.get("bytes") or b""
        if _too_large(text, data):
            await websocket.close(
                TOO_LARGE_CLOSE_CODE, f"frames are limited to {MAX_FRAME_BYTES} bytes"
            )
            return
        yield text if text is not None else data.decode("utf-8", errors="replace")


def _too_large(text: str | None, data: bytes) -> bool:
    if text is None:
        return len(data) > MAX_FRAME_BYTES
    # No character takes more than 4 bytes in UTF-8: a short text needs no encoding to tell.
    return len(text) * 4 > MAX_FRAME_BYTES and (
        len(text.encode("utf-8", errors="surrogatepass")) > MAX_FRAME_BYTES
    )


def load(text: str | bytes) -> Any:
    """The JSON in `text`.

    Raises:
        UserQuestionError: `BAD_REQUEST` when it is not JSON.
    """
    try:
        return json.loads(text)
    except ValueError as error:
        raise UserQuestionError(
            f"invalid frame: not valid JSON ({error})", ErrorCode.BAD_REQUEST
        ) from None


def decode(data: Any, kinds: Mapping[str, type[Frame]]) -> Frame:
    """The frame `data` is, chosen by its `type` among `kinds`.

    Raises:
        UserQuestionError: `BAD_REQUEST` for another type, or a frame that breaks its model.
    """
    kind = data.get("type") if isinstance(data, dict) else None
    if not isinstance(kind, str) or kind not in kinds:
        expected = ", ".join(json.dumps(name) for name in kinds)
        raise UserQuestionError(
            f'invalid frame: property "type" must be one of {expected}', ErrorCode.BAD_REQUEST
        )
    return validate(kinds[kind], data, kind)


def validate(model: type[M], data: Any, what: str) -> M:
    """`data` read as `model`; `what` names it in the message.

    Raises:
        UserQuestionError: `BAD_REQUEST`, saying which property is wrong and how.
    """
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise UserQuestionError(
            f"invalid {what}: {describe_validation_error(error)}", ErrorCode.BAD_REQUEST
        ) from None


def rpc_id_of(data: Any) -> str | None:
    """The rpcId of a frame that failed to validate, if it has a usable one."""
    if isinstance(data, dict):
        frame: JSONObject = data
        rpc_id = frame.get("rpcId")
        if isinstance(rpc_id, str):
            return rpc_id
    return None
