"""`AskerTurns`: the host-wide turns at answering handed-over asker sockets' frames. A burst of
asks is answered a bounded number at once, and a socket waiting for a turn gets one in the order
it asked for it (the e2e fleet test answers 2,000 askers through these turns on a real host)."""

from __future__ import annotations

from dataclasses import dataclass, field

from user_questions.host.endpoints.asker import AskerTurns


@dataclass
class Socket:
    name: str
    started: list[str] = field(default_factory=list)

    def start(self) -> None:
        self.started.append(self.name)


def test_at_most_the_limit_run_at_once_and_the_rest_wait_in_order() -> None:
    started: list[str] = []
    turns = AskerTurns(at_once=2)
    sockets = [Socket(name, started) for name in "abcde"]
    for socket in sockets:
        turns.want(socket)
    assert started == ["a", "b"]
    turns.done()
    assert started == ["a", "b", "c"]
    turns.want(sockets[0])  # a has a second frame: behind d and e, who asked first
    turns.done()
    turns.done()
    assert started == ["a", "b", "c", "d", "e"]
    turns.done()
    assert started[-1] == "a"
    for _ in range(2):
        turns.done()
    # Every turn handed back: two start at once again.
    turns.want(sockets[1])
    turns.want(sockets[2])
    assert started[-2:] == ["b", "c"]
