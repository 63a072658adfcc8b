"""A real PostgreSQL server for the tests: a throw-away cluster on a Unix socket in a temp folder.

`PostgresCluster` runs Debian's binaries (`/usr/lib/postgresql/<version>/bin`): `initdb` and
`pg_ctl` as the `postgres` user when the tests run as root (initdb refuses root), listening on no
TCP port at all, only on a socket in its own folder. The fixtures give one cluster per test
session and a fresh database per test, copied from an empty template (fast), so tests never see
each other's rows. Without any PostgreSQL binaries the tests that need them are skipped, saying
so; `scripts/test.sh` installs them, so CI always runs them.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresCluster", "database_of", "pg_cluster", "pg_url"]

_TEMPLATE = "uq_template"
"""An empty database every test database is copied from."""
_START_TIMEOUT = 60
"""Seconds `pg_ctl` waits for the server to start or stop."""


def _bin_dir() -> Path | None:
    """The newest installed PostgreSQL's binaries, or `None` when there are none."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parent.parent.name),
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class PostgresCluster:
    """One PostgreSQL server in `base` (data in `base/data`, the socket in `base`)."""

    def __init__(self, bin_dir: Path, base: Path) -> None:
        self.bin_dir = bin_dir
        self.base = base
        self.data = base / "data"
        self._names = itertools.count(1)
        self._run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def url(self, database: str) -> str:
        """The URL of `database`, reached through the Unix socket as the superuser."""
        return f"postgresql://postgres@/{database}?host={self.base}"

    def init(self) -> None:
        """Create the cluster and its template database, and start it."""
        if self._run_as:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError(
                    "initdb refuses root and there is no postgres user to run it as; "
                    "install Debian's postgresql package, which creates it"
                ) from None
            os.chown(self.base, owner.pw_uid, owner.pw_gid)
        self._pg(
            "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync",
            "-E", "UTF8", "--locale=C",
        )  # fmt: skip
        self.start()
        with self._connect("postgres") as connection:
            connection.execute(f"CREATE DATABASE {_TEMPLATE}")

    def start(self) -> None:
        """Start the server (durability traded for speed: these databases are thrown away)."""
        options = (
            f"-c listen_addresses='' -c unix_socket_directories='{self.base}' "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        self._pg_ctl("start", "-o", options, "-l", str(self.base / "server.log"))

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (`fast`: disconnect clients and shut down cleanly)."""
        self._pg_ctl("stop", "-m", mode)

    def ensure_running(self) -> None:
        """Start the server again if a test left it stopped."""
        status = subprocess.run(
            [*self._run_as, str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "status"],
            capture_output=True,
            check=False,
        )
        if status.returncode == 3:  # "no server running"
            self.start()

    def restart(self) -> None:
        """Stop and start the server again: every client connection is cut."""
        self.stop()
        self.start()

    def create_database(self) -> str:
        """A new empty database; returns its name."""
        name = f"uq_test_{next(self._names)}"
        with self._connect("postgres") as connection:
            connection.execute(f"CREATE DATABASE {name} TEMPLATE {_TEMPLATE}")
        return name

    def drop_database(self, name: str) -> None:
        """Drop `name`, disconnecting whoever still uses it."""
        with self._connect("postgres") as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def terminate(self, database: str, application_name: str) -> int:
        """Cut every connection of `application_name` to `database`; how many there were."""
        with self._connect("postgres") as connection:
            rows = connection.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND application_name = %s",
                (database, application_name),
            ).fetchall()
        return len(rows)

    def _connect(self, database: str) -> psycopg.Connection[tuple[object, ...]]:
        import psycopg  # only the tests that start a server need it

        return psycopg.connect(self.url(database), autocommit=True)

    def _pg_ctl(self, *args: str) -> None:
        self._pg("pg_ctl", "-D", str(self.data), "-w", "-t", str(_START_TIMEOUT), *args)

    def _pg(self, program: str, *args: str) -> None:
        command = [*self._run_as, str(self.bin_dir / program), *args]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            log = self.base / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}{tail}"
            )


def database_of(url: str) -> str:
    """The database name in a `postgresql://` URL."""
    return urlsplit(url).path.lstrip("/")


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    """A PostgreSQL server for the whole session; skipped only when none is installed."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        pytest.skip(
            "PostgreSQL is not installed (apt-get install postgresql; scripts/test.sh does)"
        )
    base = Path(tempfile.mkdtemp(prefix="uq-pg-"))
    cluster = PostgresCluster(bin_dir, base)
    try:
        cluster.init()
        yield cluster
    finally:
        with contextlib.suppress(RuntimeError):
            cluster.stop("immediate")
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def pg_url(pg_cluster: PostgresCluster) -> Iterator[str]:
    """The URL of a fresh, empty database, dropped after the test."""
    name = pg_cluster.create_database()
    yield pg_cluster.url(name)
    pg_cluster.ensure_running()
    pg_cluster.drop_database(name)
