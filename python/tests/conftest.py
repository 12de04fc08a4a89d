"""Fixtures of the kith package's tests.

``KITH_BIN`` names the ``kith`` binary (``crates/kith-cli/tests/
python_package.rs`` sets it): client-mode tests start a real ``kith serve``
with it. Without it those tests fail, saying so; nothing is skipped.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterator, List

import pytest

import kith

ALICE_KEY = "alice-key-0123456789abcdef"
BOB_KEY = "bob-key-0123456789abcdef"


def kith_bin() -> str:
    path = os.environ.get("KITH_BIN")
    if not path:
        raise RuntimeError("KITH_BIN is not set: it must name the kith binary (kith serve)")
    return path


class Server:
    """``kith serve`` over a fresh pack with keys for alice and bob."""

    def __init__(self, tmp: Path) -> None:
        self.pack = tmp / "served.kith"
        subprocess.run(
            [kith_bin(), "--pack", str(self.pack), "init", "--embeddings", "none"],
            check=True,
            capture_output=True,
        )
        keys = tmp / "keys"
        keys.write_text(f"{ALICE_KEY} alice\n{BOB_KEY} bob\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("KITH_")}
        # The worker's first look at deferred work comes quickly.
        env["KITH_WORKER_POLL_MS"] = "100"
        self.log = open(tmp / "serve.log", "wb")
        self.process = subprocess.Popen(
            [kith_bin(), "--pack", str(self.pack), "serve", "--bind", "127.0.0.1:0",
             "--keys-file", str(keys)],
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().decode()
        words = [w for w in line.split() if w.startswith("http://")]
        if not words:
            self.stop()
            raise RuntimeError(f"kith serve did not say where it listens: {line!r}")
        self.url = words[0].rstrip("/")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(tmp_path_factory.mktemp("serve"))
    yield s
    s.stop()


_sessions: List[int] = [0]


@pytest.fixture
def fresh() -> str:
    """A session id no other test used (the served pack is shared)."""
    _sessions[0] += 1
    return f"test-session-{_sessions[0]}"


@pytest.fixture
def memory(tmp_path: Path) -> kith.Memory:
    return kith.Memory(tmp_path / "m.kith", owner="maya", embeddings="none")


@pytest.fixture(params=["embedded", "client"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> kith.Memory:
    """The same tests on both: the engine in-process, and a Client of a
    real ``kith serve`` (alice's key)."""
    if request.param == "embedded":
        return kith.Memory(tmp_path / "m.kith", owner="alice", embeddings="none")
    server = request.getfixturevalue("server")
    return kith.Client(server.url, ALICE_KEY)
