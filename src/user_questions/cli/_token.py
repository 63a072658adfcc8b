"""`uq token add | change | list | revoke`: the named tokens of the people and agents of a host.

Each command opens the host's store beside the running host (`_beside`); a host hears of the change
at once (SQLite: within `WATCH_INTERVAL`; PostgreSQL: a NOTIFY), so a new token opens the page
straight away and a revoked one is refused, its open connections closed. Exit statuses: 0 done, 1
the store cannot be reached, 2 bad input (a bad or taken name, no such token, an unusable store).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

from cyclopts import App, Parameter

from user_questions.cli._beside import local_time, print_columns, with_store
from user_questions.cli._store_option import OldDb, StoreOption, chosen_store
from user_questions.host.gate.durations import (
    duration_text,
    escalation_text,
    timer_seconds,
    timer_steps,
)
from user_questions.host.gate.fair_share import parse_max_pending, parse_rate, rate_text
from user_questions.host.gate.quorum import parse_approvals
from user_questions.host.gate.tokens import (
    add_token,
    change_token,
    parse_language,
    revoke_token,
    token_json,
)
from user_questions.host.stores import Role, Store, TokenChange, TokenRecord

__all__ = ["token_app"]

token_app = App(
    name="token",
    help="Named tokens: one per person, recorded with every answer they give.",
)


Many = Annotated[list[str] | None, Parameter(negative="")]


@token_app.command(name="add")
def add(
    name: str,
    *,
    role: Role = Role.PERSON,
    group: Many = None,
    route: Many = None,
    notify: Many = None,
    deadline: str | None = None,
    escalate: Many = None,
    remind: str | None = None,
    max_pending: str | None = None,
    rate: str | None = None,
    lang: str | None = None,
    approvals: str | None = None,
    store: StoreOption = None,
    db: OldDb = None,
    url: str = "http://127.0.0.1:8765/",
) -> None:
    """Make a token for NAME; print it (shown this once) and the page's URL with it.

    Parameters
    ----------
    name
        Who the token is for: 1 to 64 characters from A-Z a-z 0-9 . _ -.
    role
        person (the default: answers what is routed to them), asker (an agent: asks, never
        answers) or admin (everything, tokens included).
    group
        Put a person or an admin in this group (routes name it as @GROUP); repeat for several.
    route
        Send an asker's questions to this person (NAME) or group (@GROUP) only; repeat for
        several. Without one they go to every person and admin.
    notify
        Tell this person of every question routed to them at this apprise URL (ntfy://,
        mailto://, ...), with answer links that answer as them; repeat for several.
    deadline
        An asker's: end each request it asks that is still pending after this long as
        timed-out (30s, 10m, 2h, 7d); the agent gets ASK_TIMED_OUT, a hook never allows.
    escalate
        An asker's: route each request it asks that is still pending AFTER its asking to
        TARGET as well (a person's NAME or @GROUP), who sees it and is notified, written
        AFTER:TARGET (10m:@oncall, 1h:admin); repeat for several steps.
    remind
        An asker's: notify the people a request it asks is routed to again every so long
        while it is pending (5m, 1h).
    max_pending
        An asker's: how many of its requests may wait for people at once (default 1000); a new
        ask beyond it is refused with TOO_MANY_PENDING.
    rate
        An asker's: how fast it may ask, PER_SECOND[:BURST] (default 10:100: a burst of 100,
        then 10 a second); a new ask beyond it is refused with RATE_LIMITED and when to ask
        again.
    lang
        This person's own language for their chats and notifications (ko, zh-Hans, ja, en);
        without it they get the host's. Another is refused with UNSUPPORTED_LANGUAGE.
    approvals
        An asker's: how many people (1 to 10, default 1) must approve each call it asks about
        before it is allowed; the first deny settles it at once.
    url
        The host's address, to print the page's URL with the token.
    """

    async def work(store: Store) -> str:
        _check_notify(notify)
        share = (max_pending, rate, approvals, lang)
        grants = _change(role, group, route, notify, deadline, escalate, remind, *share)
        return await add_token(store, name, grants)

    token = with_store("token", chosen_store("token", store, db), work)
    print(token)
    print(f"{url.rstrip('/')}/?token={token}")
    print(
        f"{name}'s {role} token is shown this once: the store keeps only its hash. Running "
        "hosts accept it now.",
        file=sys.stderr,
    )


@token_app.command(name="change")
def change(
    name: str,
    *,
    role: Role | None = None,
    group: Many = None,
    route: Many = None,
    notify: Many = None,
    deadline: str | None = None,
    escalate: Many = None,
    remind: str | None = None,
    max_pending: str | None = None,
    rate: str | None = None,
    lang: str | None = None,
    approvals: str | None = None,
    store: StoreOption = None,
    db: OldDb = None,
) -> None:
    """Change what NAME's token may do; running hosts apply it at once (its open pages and
    askers reconnect with the new permissions).

    Parameters
    ----------
    name
        Whose token to change.
    role
        Its new role: person, asker or admin.
    group
        Its groups, replacing the ones it has (a person or an admin); repeat for several.
    route
        Its routes, replacing the ones it has (an asker); repeat for several.
    notify
        Its notification URLs, replacing the ones it has (a person or an admin).
    deadline
        An asker's deadline, replacing the one it has (30s, 10m, 2h, 7d; none takes it away).
    escalate
        An asker's escalation steps AFTER:TARGET, replacing the ones it has; repeat for
        several; none takes them away.
    remind
        An asker's reminder period, replacing the one it has; none takes it away.
    max_pending
        An asker's pending cap, replacing the one it has; default gives it the host's default.
    rate
        An asker's rate PER_SECOND[:BURST], replacing the one it has; default gives it the
        host's default.
    lang
        The person's own language (ko, zh-Hans, ja, en), replacing the one they have; none
        gives them the host's.
    approvals
        How many people (1 to 10) must approve each call the asker asks about, replacing the
        number it has; 1 lets one person settle it.
    """

    async def work(store: Store) -> TokenRecord:
        _check_notify(notify)
        share = (max_pending, rate, approvals, lang)
        change = _change(role, group, route, notify, deadline, escalate, remind, *share)
        return await change_token(store, name, change)

    changed = with_store("token", chosen_store("token", store, db), work)
    timers = _timers(changed)
    said = _grants(changed) if timers == "-" else f"{_grants(changed)}; {timers}"
    print(f"{name} is now: {said}", file=sys.stderr)


@token_app.command(name="list")
def list_tokens(
    *,
    store: StoreOption = None,
    db: OldDb = None,
    json_: Annotated[bool, Parameter(name="--json", negative="")] = False,
) -> None:
    """List the named tokens: name, role, groups or routes, created, last used, revoked (never
    the tokens themselves).

    Parameters
    ----------
    json_
        One JSON object per token and line, for scripts.
    """

    async def work(store: Store) -> list[TokenRecord]:
        return await store.tokens()

    tokens = with_store("token", chosen_store("token", store, db), work)
    if json_:
        for token in tokens:
            print(json.dumps(token_json(token), ensure_ascii=False))
        return
    if not tokens:
        print("no named tokens yet; add one with `uq token add NAME`", file=sys.stderr)
        return
    rows = [("NAME", "ROLE", "GROUPS / ROUTES", "TIMERS", "CREATED", "LAST USED", "REVOKED")]
    rows += [
        (
            t.name,
            _role(t),
            ",".join(t.groups or t.routes) or "-",
            _timers(t),
            local_time(t.created_at),
            local_time(t.last_used_at),
            local_time(t.revoked_at),
        )
        for t in tokens
    ]
    print_columns(rows, 4)


@token_app.command(name="revoke")
def revoke(name: str, *, store: StoreOption = None, db: OldDb = None) -> None:
    """Revoke NAME's token: running hosts refuse it at once and close its connections.

    Parameters
    ----------
    name
        Whose token to revoke.
    """

    async def work(store: Store) -> TokenRecord:
        return await revoke_token(store, name)

    with_store("token", chosen_store("token", store, db), work)
    print(f"revoked {name}'s token; hosts refuse it from now on", file=sys.stderr)


def _grants(token: TokenRecord) -> str:
    """What a token may do, in a few words: `person in oncall, ops`, `asker routed to @oncall`,
    `person (ko) in ops` (a person with a language of their own)."""
    if token.groups:
        return f"{_role(token)} in {', '.join(token.groups)}"
    if token.routes:
        return f"{_role(token)} routed to {', '.join(token.routes)}"
    return _role(token)


def _role(token: TokenRecord) -> str:
    """A token's role, and the person's own language when they have one: `person (ko)`."""
    return str(token.role) if token.lang is None else f"{token.role} ({token.lang})"


def _timers(token: TokenRecord) -> str:
    """An asker's timers and share in a few words: `deadline 1h, escalate 10m:@oncall, remind
    5m, max-pending 200, rate 5:50, approvals 2` (a share and a quorum only where they are not
    the default)."""

    parts = [f"escalate {escalation_text(step)}" for step in token.escalate]
    if token.deadline is not None:
        parts.insert(0, f"deadline {duration_text(token.deadline)}")
    if token.remind is not None:
        parts.append(f"remind {duration_text(token.remind)}")
    if token.max_pending is not None:
        parts.append(f"max-pending {token.max_pending}")
    if token.rate is not None:
        parts.append(f"rate {rate_text(token.rate)}")
    if token.approvals > 1:
        parts.append(f"approvals {token.approvals}")
    return ", ".join(parts) or "-"


def _change(
    role: Role | None,
    groups: list[str] | None,
    routes: list[str] | None,
    notify: list[str] | None,
    deadline: str | None,
    escalate: list[str] | None,
    remind: str | None,
    max_pending: str | None,
    rate: str | None,
    approvals: str | None,
    lang: str | None,
) -> TokenChange:
    """The options of `uq token add|change` as one change, its times and share read
    (`BAD_REQUEST`, exit status 2, for a time not written as `30s`, `10m`, `2h`, `7d` or `none`,
    a cap, a rate or a quorum out of bounds; `UNSUPPORTED_LANGUAGE` for a language with no
    catalog)."""
    return TokenChange(
        role=role,
        groups=groups,
        routes=routes,
        notify=notify,
        deadline=timer_seconds(deadline),
        escalate=timer_steps(escalate),
        remind=timer_seconds(remind),
        max_pending=parse_max_pending(max_pending),
        rate=parse_rate(rate),
        lang=parse_language(lang),
        approvals=parse_approvals(approvals),
    )


def _check_notify(urls: list[str] | None) -> None:
    """Check notification URLs (`BAD_NOTIFIER`, exit status 2) before the token is written."""
    if not urls:
        return
    from user_questions.host.notify.apprise import check_apprise_url

    for url in urls:
        check_apprise_url(url)
