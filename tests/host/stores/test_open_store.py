"""`open_store(url)` picks the backend by scheme; the default store lives in the state folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from user_questions import ErrorCode, UserQuestionError
from user_questions.host import stores
from user_questions.host.stores import default_store_path, open_store
from user_questions.host.stores.sqlite import SQLiteStore


def test_a_path_or_a_sqlite_url_opens_a_sqlite_store(tmp_path: Path) -> None:
    for url in (tmp_path / "a.db", str(tmp_path / "a.db"), f"sqlite://{tmp_path}/a.db"):
        store = open_store(url)
        assert isinstance(store, SQLiteStore)
        assert store.path == tmp_path / "a.db"


def test_an_unknown_scheme_is_a_clear_error() -> None:
    with pytest.raises(UserQuestionError) as caught:
        open_store("mysql://db.example/questions")
    assert caught.value.code == ErrorCode.BAD_STORE
    assert "postgresql://" in str(caught.value)


def test_a_backend_that_is_not_installed_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        stores._BACKENDS,
        "postgresql",
        ("user_questions.host.stores.not_a_backend", "NoStore", "postgres"),
    )
    with pytest.raises(UserQuestionError) as caught:
        open_store("postgresql://localhost/uq")
    assert caught.value.code == ErrorCode.BAD_STORE
    assert "pip install 'user-questions[postgres]'" in str(caught.value)


def test_the_default_store_follows_xdg_state_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_store_path() == tmp_path / "user-questions" / "host.db"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_store_path() == tmp_path / ".local" / "state" / "user-questions" / "host.db"
