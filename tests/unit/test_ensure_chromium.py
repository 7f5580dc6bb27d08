"""``bin/ensure-chromium``: an install started in the background is waited for, never repeated.

``make test`` starts Debian's Chromium install beside the Python requirements' and calls the
script again before the browser tests. Here ``apt-get`` is a stand-in on ``PATH`` that
installs a fake browser only once the test lets it, so each step is seen in order.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bin" / "ensure-chromium"

# apt-get's stand-in: logs each call; `install` waits for the test's "go" file, then either
# puts the browser in place or, with a "fail" file, fails as a broken mirror would.
FAKE_APT = """#!/usr/bin/env bash
echo "$*" >> "$WORK/apt-calls"
if [ "$1" = install ]; then
  while [ ! -e "$WORK/go" ]; do sleep 0.05; done
  if [ -e "$WORK/fail" ]; then rm "$WORK/fail"; echo "E: mirror unreachable" >&2; exit 100; fi
  printf '#!/bin/sh\\n' > "$ROFT_CHROMIUM"; chmod +x "$ROFT_CHROMIUM"
fi
"""


@pytest.fixture
def machine(tmp_path: Path) -> dict[str, str]:
    """A machine without Chromium whose apt-get is the stand-in, root as CI's is."""
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "apt-get").write_text(FAKE_APT)
    (stubs / "id").write_text("#!/bin/sh\necho 0\n")
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{stubs}:{os.environ['PATH']}",
        "WORK": str(tmp_path),
        "TMPDIR": str(tmp_path),
        "ROFT_CHROMIUM": str(tmp_path / "chromium"),
    }


def run(machine: dict[str, str], *arguments: str) -> subprocess.CompletedProcess:
    """The script run to its end on ``machine``, its output kept."""
    return subprocess.run(
        [SCRIPT, *arguments], env=machine, cwd=machine["WORK"], capture_output=True, text=True, timeout=30
    )


def install_log(tmp_path: Path) -> str:
    return (tmp_path / "test-artifacts" / "chromium-install.log").read_text()


def installs(tmp_path: Path) -> int:
    calls = (tmp_path / "apt-calls").read_text().splitlines() if (tmp_path / "apt-calls").exists() else []
    return sum(call.startswith("install") for call in calls)


def wait_for_install_call(tmp_path: Path, count: int = 1) -> None:
    deadline = time.monotonic() + 30
    while installs(tmp_path) < count:
        assert time.monotonic() < deadline, "apt-get install was never called"
        time.sleep(0.05)


def test_the_background_install_returns_at_once_and_the_foreground_call_waits_for_it(machine, tmp_path):
    assert run(machine, "--in-background").returncode == 0
    assert not (tmp_path / "chromium").exists()  # it returned with the install under way
    wait_for_install_call(tmp_path)
    waiting = subprocess.Popen([SCRIPT], env=machine, cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    with contextlib.suppress(subprocess.TimeoutExpired):
        waiting.wait(timeout=1)
    assert waiting.returncode is None  # still waiting: the install it started is not done
    (tmp_path / "go").touch()
    output, _ = waiting.communicate(timeout=30)
    assert waiting.returncode == 0 and (tmp_path / "chromium").exists()
    assert installs(tmp_path) == 1 and output == ""  # waited for, not installed a second time
    assert "Installing Debian's chromium" in install_log(tmp_path)


def test_a_failed_background_install_is_run_again_in_the_foreground_with_its_error_shown(machine, tmp_path):
    (tmp_path / "fail").touch()
    (tmp_path / "go").touch()
    assert run(machine, "--in-background").returncode == 0
    shown = run(machine)
    assert shown.returncode == 0 and (tmp_path / "chromium").exists()
    assert installs(tmp_path) == 2
    assert "mirror unreachable" in install_log(tmp_path)
    assert "Installing Debian's chromium" in shown.stdout  # the second try in plain sight


def test_a_machine_with_chromium_installs_nothing(machine, tmp_path):
    (tmp_path / "chromium").write_text("#!/bin/sh\n")
    (tmp_path / "chromium").chmod(0o755)
    for arguments in (["--in-background"], []):
        assert run(machine, *arguments).returncode == 0
    assert installs(tmp_path) == 0
