"""The model-facing tool runtime: `ctx.tools`, tool definitions and results.

A tool is a name, a description, a JSON Schema for its arguments and an async `run`. The runtime
validates a model's arguments before dispatch, never calls a tool whose signal has already
aborted, and turns every failure into a result the model can read: `Error: <message>`, with the
`{"name", "code"}` of a `HarnessError` so a harness can branch on it. Each tool exports its
definition in the shapes OpenAI (Chat Completions and Responses, strict mode), Anthropic and MCP
take.
"""

from __future__ import annotations

import builtins
import copy
import functools
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from user_questions._reading.json_reader import JSONRefused, load_json
from user_questions._reading.json_schema import Check, JSONSchema, SchemaViolation, compile_schema
from user_questions.abort import AbortSignal
from user_questions.agents import Agent
from user_questions.errors import ErrorCode, HarnessError, ToolArgsError
from user_questions.kernel import Context, Service

__all__ = ["Tool", "ToolCall", "ToolRegistry", "ToolResult", "compact_json"]

logger = logging.getLogger(__name__)

# Keywords OpenAI's strict mode rejects or ignores; the runtime still checks them on arrival.
_STRICT_UNSUPPORTED = ("minLength", "maxLength", "minItems", "maxItems", "pattern", "format")


def compact_json(value: object) -> str:
    """JSON with no spaces and non-ASCII kept: what a model reads cheaply."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class ToolCall:
    """What a tool's `run` gets besides its arguments."""

    agent: Agent | None = None
    """The agent whose model called the tool, if the harness said."""
    signal: AbortSignal | None = None
    """Aborts the call."""


@dataclass(frozen=True, eq=False)
class Tool:
    """A tool a model can call."""

    name: str
    description: str
    parameters: JSONSchema
    """The JSON Schema of the arguments, checked before `run` is called."""
    run: Callable[[dict[str, Any], ToolCall], Awaitable[Any]]
    """Does the work and returns the structured value of a success."""
    render: Callable[[Any], str] = field(default=compact_json)
    """Turns the value into the text the model reads."""

    @functools.cached_property
    def check_arguments(self) -> Check:
        """`parameters` compiled once: `tool.check_arguments(args, ())` returns the checked args."""
        return compile_schema(self.parameters)

    def to_openai(self) -> dict[str, Any]:
        """A Chat Completions function tool, valid in strict mode (no `oneOf`; every property
        required, optional ones nullable; no additional properties)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": _strict(self.parameters),
                "strict": True,
            },
        }

    def to_responses(self) -> dict[str, Any]:
        """A Responses API function tool (the flat shape the OpenAI Agents SDK uses too), valid
        in strict mode like `to_openai()`."""
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": _strict(self.parameters),
            "strict": True,
        }

    def to_anthropic(self) -> dict[str, Any]:
        """An Anthropic Messages API tool definition."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": copy.deepcopy(self.parameters),
        }

    def to_mcp(self) -> dict[str, Any]:
        """An MCP `tools/list` entry."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": copy.deepcopy(self.parameters),
        }


def _strict(schema: JSONSchema) -> JSONSchema:
    result = {k: v for k, v in schema.items() if k not in _STRICT_UNSUPPORTED}
    if "items" in result:
        result["items"] = _strict(result["items"])
    if "properties" in result:
        required = set(result.get("required", ()))
        properties = {}
        for key, sub in result["properties"].items():
            sub = _strict(sub)
            if key not in required and "type" in sub:
                types = [sub["type"]] if isinstance(sub["type"], str) else list(sub["type"])
                sub["type"] = [*types, "null"] if "null" not in types else types
            properties[key] = sub
        result["properties"] = properties
        result["required"] = list(properties)
        result["additionalProperties"] = False
    return result


@dataclass(slots=True)
class ToolResult:
    """The outcome of a tool call, as the model will read it."""

    content: list[dict[str, str]]
    """One `{"type": "text", "text": ...}` item."""
    is_error: bool = False
    value: Any = None
    """The structured value of a success."""
    error: dict[str, Any] | None = None
    """`{"message", "info"}` of a failure; `info` is `{"name", "code"}` for a `HarnessError`."""

    @property
    def text(self) -> str:
        """The text the model reads."""
        return self.content[0]["text"]

    @classmethod
    def success(cls, value: Any, text: str) -> ToolResult:
        return cls(content=[{"type": "text", "text": text}], value=value)

    @classmethod
    def failure(cls, message: str, info: dict[str, str] | None = None) -> ToolResult:
        error: dict[str, Any] = {"message": message}
        if info is not None:
            error["info"] = info
        return cls(
            content=[{"type": "text", "text": f"Error: {message}"}], is_error=True, error=error
        )

    @classmethod
    def from_error(cls, error: HarnessError) -> ToolResult:
        return cls.failure(error.message, error.info())


class ToolRegistry(Service):
    """`ctx.tools`: the tools models may call, and the runtime that calls them."""

    provides = "tools"

    def __init__(self, ctx: Context, config: Any = None) -> None:
        super().__init__(ctx, config)
        self._tools: dict[str, Tool] = {}

    def register(self, tool: Tool) -> Callable[[], None]:
        """Offer `tool` while the caller's fiber lives; returns its idempotent disposer.

        Raises:
            HarnessError: `DUPLICATE_TOOL` when a tool of that name is registered.
        """
        if tool.name in self._tools:
            raise HarnessError(
                f"a tool named {tool.name} is already registered", ErrorCode.DUPLICATE_TOOL
            )

        def register() -> Callable[[], None]:
            self._tools[tool.name] = tool

            def unregister() -> None:
                if self._tools.get(tool.name) is tool:
                    del self._tools[tool.name]

            return unregister

        return self.caller.effect(register)

    def get(self, name: str) -> Tool | None:
        """The tool named `name`."""
        return self._tools.get(name)

    def list(self) -> builtins.list[Tool]:
        """Every registered tool, in registration order."""
        return builtins.list(self._tools.values())

    async def execute(
        self,
        name: str,
        args: object,
        *,
        agent: Agent | None = None,
        signal: AbortSignal | None = None,
    ) -> ToolResult:
        """Call a tool as a model asked, and return what the model will read.

        `args` is the parsed arguments object, or its JSON text. Never raises for a failure of
        the call: an aborted signal, an unknown tool, invalid arguments or an error of the tool
        all come back as an error result. Cancellation of the awaiting task propagates.
        """
        if signal is not None and signal.aborted:
            return ToolResult.failure(
                "tool call aborted before dispatch",
                {"name": "AbortError", "code": ErrorCode.ABORTED_BEFORE_DISPATCH},
            )
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.failure(
                f"unknown tool {json.dumps(name, ensure_ascii=False)}",
                {"name": "HarnessError", "code": ErrorCode.UNKNOWN_TOOL},
            )
        try:
            checked = tool.check_arguments(_parsed(args), ())
        except SchemaViolation as violation:
            return ToolResult.from_error(ToolArgsError(str(violation)))
        try:
            value = await tool.run(checked, ToolCall(agent=agent, signal=signal))
        except HarnessError as error:
            return ToolResult.from_error(error)
        except Exception as error:
            # A bug in a tool must reach the model as a failure, not kill the agent's turn.
            logger.exception("tool %s raised", name)
            return ToolResult.failure(str(error) or type(error).__name__)
        return ToolResult.success(value, tool.render(value))


def _parsed(args: object) -> object:
    """Arguments given as JSON text, read within the bounds of `_reading.json_reader.load_json`."""
    if not isinstance(args, str | bytes):
        return args
    try:
        return load_json(args)
    except JSONRefused as refused:
        raise SchemaViolation(str(refused)) from None
