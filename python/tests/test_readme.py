"""The README's Python agent example runs as printed."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import kith

README = Path(__file__).resolve().parents[2] / "README.md"


def example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    agent = [b for b in blocks if "from kith import Memory" in b]
    assert len(agent) == 1, "the README has one Python agent example"
    return agent[0]


def test_the_readme_agent_example_runs(tmp_path):
    code = example()
    lines = [l for l in code.splitlines() if l.strip()]
    assert len(lines) <= 16, f"the example is {len(lines)} lines"
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    finally:
        os.chdir(cwd)
    printed = out.getvalue()
    assert "Maya" in printed and "Lisbon" in printed, printed
    # It made a pack that a new Memory reads.
    again = kith.Memory(tmp_path / "agent.kith", owner="maya", create=False)
    assert [e.role for e in again.events(session="chat-1")] == ["user", "assistant"]


def test_the_installed_wheel_is_what_runs():
    # pytest runs from outside the sources: this is the installed package.
    assert "site-packages" in kith.__file__, kith.__file__
    assert kith.__version__ == "0.1.0"
