"""The hub: the inbox in code. Pending requests, fan-out to pages, first answer wins.

The store is the source of truth; the hub keeps a cache of the pending requests (their
`question/requested` frames written around their questions' JSON text when sent, a few microseconds
each) so that a page that connects gets them replayed at once. Every change goes through the store
first and reaches the cache through `Hub._apply`, the one place that updates it, announces it to the
pages, times it, and releases the askers waiting on it:

- `submit` checks a request with the service's request checks, renders its details once (off
  the event loop, within a budget: `markdown.render_details`), stores it (idempotently: the same
  rpcId re-attaches), then shows it;
- `respond` checks a page's answer with the service's answer checks (and the request's session,
  when the response names one), then settles it with the store's conditional update: of two
  answers at once exactly one wins; an approval of a request that needs several is counted
  instead (`Store.approve`), and the one that completes the quorum settles it;
- `withdraw` settles a request for an asker that gave up (abort, timeout, cancellation).

Identical requests of one asker token pending at once (`_groups`) are one card with a count
(`group` on its frame, `question/group` when the count changes); an answer to any of them
settles them all, each through the store as its own settlement.

Each settlement records the surface (`via`) and the person (`by`, a token's name). Handing the
pending requests to a page (`subscribe`) records them as shown; so does `record_shown()`, which
whoever lists `pending_frames()` to a person calls. The shown times are written in the
background (`shown.ShownRecorder`), never delaying a page.

When the store reports that another host changed something (`Store.on_change`), the hub re-reads
what changed and applies it the same way, so pages and askers on every host see every request.
A counted approval of a request that needs several (a quorum) is such a change: every host reads
who approved it so far, sends its pages a `question/quorum` frame and tells its `on_tally`
listeners (the chat cards).

`on_event` listeners (notifications) hear of the changes this host wrote itself: a request it
stored as new, a settlement it won. Each write has exactly one writer among the hosts sharing a
store, so every event is reported by exactly one host. The hub's `metrics` (`HostMetrics`) is
one such listener, and reads the number of pending requests from the hub.

This module is the front door (`Hub` and what its callers name); the modules behind it, lowest
first (each imports only from its own level or a lower one; `tests/test_layers.py` checks it,
and that this map names each at its level):

    0 _timetable, _pages,       when each request's deadline, escalation step and reminder is
      _events, _groups          due, on a `Clock`; the page fan-out (`PageSubscription`), which
                                sends each frame to the pages it concerns; what the hub tells
                                its listeners; identical requests of one asker, shown as one
                                card with a count
    1 _requests                 who asked what under which id; the cache of the pending and
                                the recently settled requests, and what applying a record changed
    1 _admission                whether a new ask is taken: its asker token's pending cap and
                                rate (`gate/fair_share.py`), counted from the cache
    2 _checks                   the request checks: what an ask and a response must be, and the
                                refusals and receipts that say why not
    2 _quorum                   which answers are approvals of a quorum to count, and what the
                                person who gave one short of it is told (`1 of 2 approved`)
    3 _intake                   a new request made ready to store: the host's card, the rules'
                                decision, its times on the clock, its frame
    3 _following                following the store (`StoreFollower`): re-reads what other
                                hosts changed, and who approved a quorum's request so far
    4 _hub                      `Hub`, composing them over one store, with the rules as the
                                inbox applies them (`rules.InboxRules`)
"""

from user_questions.host.hub._events import EventListener, RoutedListener, TallyListener
from user_questions.host.hub._groups import OnePerCard
from user_questions.host.hub._hub import MAX_PENDING, HostTask, Hub
from user_questions.host.hub._intake import RENDER_WORKERS
from user_questions.host.hub._pages import MAX_CLIENT_BACKLOG, PageSubscription, Sees
from user_questions.host.hub._requests import Watcher
from user_questions.host.hub._timetable import Clock, SystemClock

__all__ = [
    "MAX_CLIENT_BACKLOG",
    "MAX_PENDING",
    "RENDER_WORKERS",
    "Clock",
    "EventListener",
    "HostTask",
    "Hub",
    "OnePerCard",
    "PageSubscription",
    "RoutedListener",
    "Sees",
    "SystemClock",
    "TallyListener",
    "Watcher",
]
