"""A2A push notifications: the webhooks an asker registers for a task, kept in the store, and
their delivery once the task ends.

The `a2a` extra. A push configuration (`TaskPushNotificationConfig`) is kept as a setting of the
store (`a2a-push:<taskId>:<configId>`, the config as JSON), so every node sharing the store knows
it and a restarted host still has it. A task asked over A2A changes state once, from `working` to
how it ended, so it is pushed once: the host that committed the settlement (the room's listener of
the hub queues it, `PUSH_QUEUE` at most) POSTs the whole task (`{"task": ...}`, the
`StreamResponse` A2A pushes) to each of its webhooks, then forgets them. A
configuration added after its task ended is delivered at once, so a settlement racing the
registration is never missed (a webhook may then hear of it twice, which A2A allows).

Each POST carries the config's `token` in `X-A2A-Notification-Token` (as the A2A SDK sends it)
and its `authentication` as `Authorization: <scheme> <credentials>`. A delivery succeeds on a 2xx;
a connection failure, a timeout, 408, 429 or a 5xx is tried again with backoff, up to
`PUSH_TRIES` attempts; redirects are not followed. Deliveries wait in a bounded queue and never
delay an answer; a host that crashes before it delivered loses that delivery, and the client's
`GetTask` still has the outcome.

A webhook's address is the asker's to choose, so the host refuses, when the config is made and
again before each POST, a URL that is not http(s) or whose name resolves to a loopback, private,
link-local or otherwise non-public address (the SDK's `validate_push_notification_url`), unless
it runs with `--a2a-push-private` (a host whose askers and webhooks are on its own network).
"""

from __future__ import annotations

import json
import logging
import uuid
from urllib.parse import quote, urlsplit

import anyio
import httpx
from a2a.types import StreamResponse, TaskPushNotificationConfig
from a2a.utils.push_url_validator import validate_push_notification_url
from anyio.streams.memory import MemoryObjectReceiveStream
from google.protobuf import json_format

from user_questions._version import __version__
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.a2a.tasks import task_of
from user_questions.host.notify.posting import backoff_pause, post_once
from user_questions.host.stores import SettingStore, StoredQuestion

__all__ = [
    "MAX_PUSH_CONFIGS",
    "MAX_SECRET_LENGTH",
    "MAX_URL_LENGTH",
    "PUSH_PREFIX",
    "PUSH_TIMEOUT",
    "PUSH_TOKEN_HEADER",
    "PUSH_TRIES",
    "PushConfigs",
    "PushSender",
]

logger = logging.getLogger("user_questions.host.a2a")

PUSH_PREFIX = "a2a-push:"
"""The prefix of the settings that hold push configurations."""
MAX_PUSH_CONFIGS = 10
"""Push configurations one task may have."""
MAX_URL_LENGTH = 2048
MAX_SECRET_LENGTH = 4096
"""Characters in a config's token, or in its credentials."""
PUSH_TOKEN_HEADER = "X-A2A-Notification-Token"
PUSH_TRIES = 5
"""Attempts per webhook, the first included."""
PUSH_TIMEOUT = 10.0
"""Seconds one attempt may take."""
PUSH_WORKERS = 4
"""Tasks whose pushes go out at once."""
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 30.0


class PushConfigs:
    """The push configurations of A2A tasks, in the store's settings."""

    def __init__(self, store: SettingStore, *, allow_private: bool = False) -> None:
        self.store = store
        self.allow_private = allow_private

    async def add(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        """Keep `config` (its `id` made up when it has none; an existing one with its id is
        replaced) and return it as kept.

        Raises:
            UserQuestionError: `BAD_REQUEST` for a URL the host will not POST to, a token or
                credentials too long; `LIMIT_EXCEEDED` beyond `MAX_PUSH_CONFIGS` for the task.
        """
        kept = TaskPushNotificationConfig()
        kept.CopyFrom(config)
        kept.tenant = ""
        if not kept.id:
            kept.id = str(uuid.uuid4())
        await self.check_url(kept.url)
        for what, text in (("token", kept.token), ("credentials", kept.authentication.credentials)):
            if len(text) > MAX_SECRET_LENGTH:
                raise UserQuestionError(
                    f"a push config's {what} is {len(text)} characters long; at most "
                    f"{MAX_SECRET_LENGTH} are allowed",
                    ErrorCode.BAD_REQUEST,
                )
        known = await self.of_task(kept.task_id)
        if len(known) >= MAX_PUSH_CONFIGS and all(other.id != kept.id for other in known):
            raise UserQuestionError(
                f"task {kept.task_id} has {len(known)} push configs already; at most "
                f"{MAX_PUSH_CONFIGS} are allowed",
                ErrorCode.LIMIT_EXCEEDED,
            )
        await self.store.set_setting(_key(kept.task_id, kept.id), json_format.MessageToJson(kept))
        return kept

    async def of_task(self, task_id: str) -> list[TaskPushNotificationConfig]:
        """The push configurations of `task_id`, in the order of their ids."""
        found = await self.store.settings_under(_key(task_id, ""))
        return [_config(found[key]) for key in sorted(found)]

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        text = await self.store.setting(_key(task_id, config_id))
        return None if text is None else _config(text)

    async def delete(self, task_id: str, config_id: str) -> None:
        """Forget one configuration; nothing happens when there is none."""
        await self.store.delete_setting(_key(task_id, config_id))

    async def check_url(self, url: str) -> None:
        """Refuse a webhook address the host will not POST to (see the module docstring).

        Raises:
            UserQuestionError: `BAD_REQUEST` saying why.
        """
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
            usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        except ValueError:
            usable = False
        if not usable or len(url) > MAX_URL_LENGTH:
            raise UserQuestionError(
                f"a push URL must be an http:// or https:// URL of at most {MAX_URL_LENGTH} "
                f"characters, got {url[:200]!r}",
                ErrorCode.BAD_REQUEST,
            )
        if not self.allow_private and not await validate_push_notification_url(url):
            raise UserQuestionError(
                f"the push URL {url[:200]!r} does not resolve to a public address; a host "
                "whose webhooks are on its own network runs with --a2a-push-private",
                ErrorCode.BAD_REQUEST,
            )


class PushSender:
    """Delivers the pushes of the A2A tasks a host ends (`deliver`), as they are queued by the
    room's listener of the hub (`host/a2a/__init__.py`, which needs no SDK)."""

    def __init__(
        self,
        store: SettingStore,
        *,
        allow_private: bool = False,
        tries: int = PUSH_TRIES,
        backoff: float = BACKOFF_FIRST,
        timeout: float = PUSH_TIMEOUT,
    ) -> None:
        self.configs = PushConfigs(store, allow_private=allow_private)
        """The push configurations it delivers, as this host screens them."""
        self._tries = max(1, tries)
        self._backoff = backoff
        self._timeout = timeout

    async def deliver(self, ended: MemoryObjectReceiveStream[StoredQuestion]) -> None:
        """Push every ended task `ended` gives, `PUSH_WORKERS` at once, until it closes or this
        is cancelled."""
        headers = {"user-agent": f"user-questions/{__version__}"}
        async with (
            ended,
            httpx.AsyncClient(
                timeout=self._timeout, follow_redirects=False, headers=headers
            ) as client,
            anyio.create_task_group() as workers,
        ):
            for _ in range(PUSH_WORKERS):
                workers.start_soon(self._work, client, ended.clone())

    async def _work(
        self, client: httpx.AsyncClient, ended: MemoryObjectReceiveStream[StoredQuestion]
    ) -> None:
        async with ended:
            async for record in ended:
                await self._push(client, record)

    async def _push(self, client: httpx.AsyncClient, record: StoredQuestion) -> None:
        """POST the ended task to each of its webhooks, then forget them."""
        try:
            configs = await self.configs.of_task(record.rpc_id)
        except UserQuestionError as error:
            logger.warning("could not read task %s's push configs: %s", record.rpc_id, error)
            return
        if not configs:
            return
        body = json.dumps(json_format.MessageToDict(StreamResponse(task=task_of(record))))
        for config in configs:
            await self._post(client, config, body.encode())
        try:
            for config in configs:
                await self.configs.delete(record.rpc_id, config.id)
        except UserQuestionError as error:
            logger.warning("could not forget task %s's push configs: %s", record.rpc_id, error)

    async def _post(
        self, client: httpx.AsyncClient, config: TaskPushNotificationConfig, body: bytes
    ) -> bool:
        """One webhook, tried up to `tries` times; whether it took the push."""
        target = _target(config.url)
        headers = {"content-type": "application/a2a+json"}
        if config.token:
            headers[PUSH_TOKEN_HEADER] = config.token
        if config.authentication.scheme and config.authentication.credentials:
            scheme = config.authentication.scheme
            headers["authorization"] = f"{scheme} {config.authentication.credentials}"
        for attempt in range(1, self._tries + 1):
            failure = await self._attempt(client, config.url, body, headers)
            if failure is None:
                return True
            problem, again = failure
            if not again or attempt == self._tries:
                logger.warning(
                    "A2A push of task %s to %s dropped after %d %s (%s)",
                    config.task_id,
                    target,
                    attempt,
                    "try" if attempt == 1 else "tries",
                    problem,
                )
                return False
            await anyio.sleep(backoff_pause(attempt, self._backoff, BACKOFF_MAX))
        return False  # pragma: no cover - the loop returns on its last attempt

    async def _attempt(
        self, client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str]
    ) -> tuple[str, bool] | None:
        """One POST: `None` when taken, else what failed and whether to try again."""
        try:
            await self.configs.check_url(url)  # again: a name may resolve elsewhere now
        except UserQuestionError as error:
            return error.message, False
        return await post_once(client, url, body, headers, self._timeout)


def _target(url: str) -> str:
    """A webhook as a log line names it: its origin only (a path may hold a secret)."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}"


def _key(task_id: str, config_id: str) -> str:
    """The setting of a config (`config_id` empty: the prefix of the task's); the ids are quoted,
    so no id can reach into another task's keys."""
    return f"{PUSH_PREFIX}{quote(task_id, safe='')}:{quote(config_id, safe='')}"


def _config(text: str) -> TaskPushNotificationConfig:
    config = TaskPushNotificationConfig()
    json_format.Parse(text, config)
    return config
