"""Reading what clients send a host: WebSocket frames, bounded in bytes, and JSON into frames.

Both WebSocket protocols (the page's `/ws` and the asker's `/ws/ask`) and `POST /api/respond` read
their input here, so a frame is limited, parsed and refused the same way everywhere:

- `receive_texts(websocket)` yields each frame's text (a binary frame's bytes, which must be
  UTF-8); a frame over `MAX_FRAME_BYTES` (counted in UTF-8 bytes, as the asker counts what it
  sends) closes the connection with code 1009;
- `parse` turns a frame's text into its model, questions and answer included, or raises
  `FrameError` (`BAD_REQUEST`, or `BAD_ANSWER` for a problem inside an answer, with a one-line
  message and the rpcId the frame named, if usable: a refusal is answered by name); JSON is
  read within the bounds of `_reading.json_reader.load_json` (nesting depth, lone surrogates);
- `load` and `validate` do the same for an HTTP body; only an rpcId that a request can have
  (`_checks.usable_id`: 1 to `MAX_ID_LENGTH` characters of text) is echoed in a refusal.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, TypeVar

from pydantic import ValidationError
from starlette.websockets import WebSocket

from user_questions._checks import usable_id
from user_questions._reading.json_reader import JSONRefused, load_json
from user_questions._reading.wire import frame_refusal, read_json
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import MAX_FRAME_BYTES, Frame, JSONObject, PongFrame
from user_questions.types import WireModel

__all__ = [
    "PONG",
    "TOO_LARGE_CLOSE_CODE",
    "FrameError",
    "load",
    "parse",
    "receive_texts",
    "validate",
]

PONG = PongFrame().model_dump_json()
"""The host's answer to a `ping`, on either protocol."""
TOO_LARGE_CLOSE_CODE = 1009
"""The WebSocket close code of a connection that sent a frame over `MAX_FRAME_BYTES`."""

M = TypeVar("M", bound=WireModel)


class FrameError(UserQuestionError):
    """A frame refused (`BAD_REQUEST`, or `BAD_ANSWER` for the answer it carries), and the
    rpcId it named if a reply may name it."""

    def __init__(self, message: str, rpc_id: str | None, code: str = ErrorCode.BAD_REQUEST) -> None:
        super().__init__(message, code)
        self.rpc_id = rpc_id


async def receive_texts(websocket: WebSocket) -> AsyncIterator[str | bytes]:
    """The text of each frame until the peer leaves (a binary frame's bytes, which `parse`
    reads as UTF-8); an oversized frame ends the connection."""
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
        yield text if text is not None else data


def _too_large(text: str | None, data: bytes) -> bool:
    if text is None:
        return len(data) > MAX_FRAME_BYTES
    # No character takes more than 4 bytes in UTF-8: a short text needs no encoding to tell.
    return len(text) * 4 > MAX_FRAME_BYTES and (
        len(text.encode("utf-8", errors="surrogatepass")) > MAX_FRAME_BYTES
    )


def load(text: str | bytes) -> Any:
    """The JSON in `text` (an HTTP body).

    Raises:
        UserQuestionError: `BAD_REQUEST` when it is not JSON, nests too deep or holds a lone
            surrogate.
    """
    return read_json(text, what="frame", code=ErrorCode.BAD_REQUEST)


def parse(text: str | bytes, kinds: Mapping[str, type[Frame]]) -> Frame:
    """The frame in `text` (bytes: UTF-8), chosen by its `type` among `kinds`.

    Raises:
        FrameError: `BAD_REQUEST` for text that is not JSON (or bytes not UTF-8), nests too deep
            or holds a lone surrogate, another type, or a frame that breaks its model; with the
            frame's rpcId when it named a usable one; `BAD_ANSWER` when only the answer it
            carries is wrong.
    """
    try:
        data = load_json(text)
    except JSONRefused as refused:
        raise FrameError(f"invalid frame: {refused}", _rpc_id_of(refused.document)) from None
    kind = data.get("type") if isinstance(data, dict) else None
    if not isinstance(kind, str) or kind not in kinds:
        expected = ", ".join(json.dumps(name) for name in kinds)
        raise FrameError(f'invalid frame: property "type" must be one of {expected}', None)
    try:
        return validate(kinds[kind], data, kind)
    except UserQuestionError as error:
        raise FrameError(error.message, _rpc_id_of(data), error.code) from None


def validate(model: type[M], data: Any, what: str) -> M:
    """`data` read as the frame (or body) `model`; `what` names it in the message.

    Raises:
        UserQuestionError: `BAD_REQUEST`, saying which property is wrong and how, or, when only
            the questions or the answer it carries are wrong, as `_reading.wire.frame_refusal`
            tells it (`BAD_ANSWER` for an answer).
    """
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise frame_refusal(error, what=what) from None


def _rpc_id_of(data: Any) -> str | None:
    """The usable rpcId of a frame that could not be read, if it named one."""
    if isinstance(data, dict):
        frame: JSONObject = data
        rpc_id = frame.get("rpcId")
        if isinstance(rpc_id, str):
            return usable_id(rpc_id)
    return None
