"""The README's first command and its examples, as a new user runs them: Scripts/demo.sh
against the bundled sample IdP and API (Scripts/sample-oauth-api.py), and every example of
"Which setup do I want?" run as written, on free ports."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO, free_port, wait_until

SAMPLE = REPO / "Scripts" / "sample-oauth-api.py"


def demo_environment(latchkey_bin: Path, tmp_path: Path) -> dict:
    env = dict(os.environ)
    env.update(LATCHKEY_BIN=str(latchkey_bin), DEMO_PORT=str(free_port()), DEMO_API_PORT=str(free_port()),
               TMPDIR=str(tmp_path))
    env.pop("DEMO_ONCE", None)
    return env


def test_demo_once_shows_each_step_and_exits(latchkey_bin, tmp_path):
    result = subprocess.run(["bash", "Scripts/demo.sh", "--once"], cwd=REPO, env=demo_environment(latchkey_bin, tmp_path),
                            capture_output=True, text=True, timeout=120)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    steps = [line for line in out.splitlines() if line.startswith("✓ ")]
    assert [s[2:4] for s in steps] == ["1.", "2.", "3.", "4.", "5.", "6."], out
    assert "✗" not in out
    # Each step line carries the IdP's count of token requests; one password grant in all,
    # the restart included.
    assert all("IdP: " in s for s in steps[:4]), out
    assert re.search(r"IdP: \d+ token requests, 1 password, \d+ refresh_token", steps[3]), steps[3]
    assert re.search(r"^\s+demo\s+password\s+store\s+valid", out, re.M), out
    assert "demo complete" in out
    # The scratch directory (token store, logs, config) is gone.
    assert not list(tmp_path.glob("latchkey-demo.*"))


def test_demo_keeps_running_until_interrupted(latchkey_bin, tmp_path):
    env = demo_environment(latchkey_bin, tmp_path)
    log = tmp_path / "demo.out"
    with open(log, "w") as out:
        demo = subprocess.Popen(["bash", "Scripts/demo.sh"], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        assert wait_until(lambda: "latchkey is running" in log.read_text(), timeout=90), log.read_text()
        proxy = f"http://127.0.0.1:{env['DEMO_PORT']}"
        assert f"curl {proxy}/api/me" in log.read_text()
        answer = subprocess.run(["curl", "-s", f"{proxy}/api/me"], capture_output=True, text=True, timeout=10).stdout
        assert '"user": "demo"' in answer
        os.killpg(demo.pid, signal.SIGINT)
        assert demo.wait(timeout=30) == 0
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()
    # Nothing it started is left: the ports are free again.
    assert subprocess.run(["curl", "-s", f"http://127.0.0.1:{env['DEMO_API_PORT']}/health"]).returncode != 0


# --- the README's "Which setup do I want?" ----------------------------------------------------

def readme_examples() -> list[str]:
    """The shell blocks of the section, in order; the first builds and starts the sample."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Which setup do I want?", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def test_readme_names_the_three_setups():
    section = (REPO / "README.md").read_text().split("## Which setup do I want?", 1)[1].split("\n## ", 1)[0]
    for heading in ("### A browser or an app on localhost", "### A script", "### A sidecar"):
        assert heading in section
    blocks = readme_examples()
    assert len(blocks) == 4
    assert "python3 Scripts/sample-oauth-api.py" in blocks[0]


@pytest.mark.parametrize("index,expected", [
    (1, ['"user": "demo"', '"name": "latch"', "demo      password"]),
    (2, ['"name": "latch"', '"user": "demo"', "exec-ok"]),
    (3, ['"user": "demo"', "401"]),
])
def test_readme_example_runs_as_written(latchkey_bin, tmp_path, index, expected):
    """The example, its configs and the sample moved to free ports; nothing else changed."""
    ports = {"8080": str(free_port()), "8081": str(free_port()), "9000": str(free_port())}
    socket_path = str(tmp_path / "sidecar.sock")

    def relocate(text: str) -> str:
        for fixed, free in ports.items():
            text = text.replace(f"127.0.0.1:{fixed}", f"127.0.0.1:{free}").replace(f"0.0.0.0:{fixed}", f"0.0.0.0:{free}")
        return text.replace("/tmp/latchkey-sidecar.sock", socket_path)

    (tmp_path / "Configs").mkdir()
    for config in (REPO / "Configs").glob("demo*.yaml"):
        (tmp_path / "Configs" / config.name).write_text(relocate(config.read_text()))
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "latchkey").symlink_to(latchkey_bin)
    env = dict(os.environ)
    env.update(PATH=f"{tmp_path / 'bin'}:{env['PATH']}", HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"))
    env.pop("LATCHKEY_STORE_KEY", None)

    sample = subprocess.Popen([sys.executable, str(SAMPLE), "--listen", f"127.0.0.1:{ports['9000']}", "--quiet"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: subprocess.run(["curl", "-fs", f"http://127.0.0.1:{ports['9000']}/health"],
                                                 capture_output=True).returncode == 0, timeout=10)
        script = relocate(readme_examples()[index])
        result = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=60)
    finally:
        sample.terminate()
        sample.wait(timeout=10)
    assert result.returncode == 0, result.stdout + result.stderr
    for text in expected:
        assert text in result.stdout, result.stdout
    assert "demo-at-" not in result.stdout and "demo-rt-" not in result.stdout


def test_sample_rotates_refresh_tokens_and_refuses_expired_access_tokens(tmp_path):
    """The demo's claims rest on the sample behaving as an OAuth2 server does."""
    import base64
    import json
    import time
    import urllib.error
    import urllib.request

    port = free_port()
    sample = subprocess.Popen([sys.executable, str(SAMPLE), "--listen", f"127.0.0.1:{port}", "--access-token-seconds", "1",
                               "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"

    def call(path, form=None, token=None, client=("demo-client", "demo-secret")):
        data = None if form is None else "&".join(f"{k}={v}" for k, v in form.items()).encode()
        request = urllib.request.Request(base + path, data=data)
        if token:
            request.add_header("Authorization", "Bearer " + token)
        elif client:
            request.add_header("Authorization", "Basic " + base64.b64encode(":".join(client).encode()).decode())
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    try:
        assert wait_until(lambda: subprocess.run(["curl", "-fs", base + "/health"], capture_output=True).returncode == 0)
        status, first = call("/oauth/token", {"grant_type": "password", "username": "demo", "password": "demo-password"})
        assert status == 200 and first["expires_in"] == 1
        assert call("/api/me", token=first["access_token"])[0] == 200
        status, second = call("/oauth/token", {"grant_type": "refresh_token", "refresh_token": first["refresh_token"]})
        assert status == 200 and second["refresh_token"] != first["refresh_token"]
        # A used refresh token is dead; a wrong client secret is invalid_client.
        assert call("/oauth/token", {"grant_type": "refresh_token", "refresh_token": first["refresh_token"]}) == \
            (400, {"error": "invalid_grant", "error_description": "the refresh token is unknown or was used already"})
        assert call("/oauth/token", {"grant_type": "client_credentials"}, client=("demo-client", "wrong"))[1]["error"] == \
            "invalid_client"
        time.sleep(1.2)  # the access token's whole lifetime: what is tested is its expiry
        assert call("/api/me", token=second["access_token"])[0] == 401
    finally:
        sample.terminate()
        sample.wait(timeout=10)
