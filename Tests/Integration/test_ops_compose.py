"""Docker/compose.yaml: valid by the Compose specification (check-jsonschema's vendored
copy), wired as its comments say (the config mounted where the image reads it, every
secret the config names a Compose secret of the service, the port published on loopback
only), and its Latchkey config working against the sample IdP and API it runs, with the
containers' names swapped for loopback addresses: no Docker engine runs here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from example_configs import materialise, references
from support import REPO, wait_until

COMPOSE = REPO / "Docker" / "compose.yaml"
CONFIG = REPO / "Docker" / "compose" / "latchkey.yaml"
SAMPLE = REPO / "Scripts" / "sample-oauth-api.py"
VALIDATOR = Path(sys.executable).parent / "check-jsonschema"
# The sample's published demo credentials (Scripts/sample-oauth-api.py).
DEMO_SECRETS = {"client-secret": "demo-secret", "password": "demo-password"}


def check_compose(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(VALIDATOR), "--builtin-schema", "vendor.compose-spec", str(path)],
                          capture_output=True, text=True, timeout=120)


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_the_compose_file_follows_the_compose_specification():
    result = check_compose(COMPOSE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_specification_check_refuses_a_misspelt_key(tmp_path):
    broken = tmp_path / "compose.yaml"
    broken.write_text(COMPOSE.read_text().replace("stop_grace_period:", "stop_grace_periode:"))
    result = check_compose(broken)
    assert result.returncode != 0 and "stop_grace_periode" in result.stdout + result.stderr


def test_the_services_are_wired_as_the_config_expects():
    spec = compose()
    latchkey, sample = spec["services"]["latchkey"], spec["services"]["sample-api"]
    assert latchkey["build"] == {"context": "..", "dockerfile": "Docker/Dockerfile"}
    assert "./compose/latchkey.yaml:/etc/latchkey/latchkey.yaml:ro" in latchkey["volumes"]  # the image's --config
    assert all(port.startswith("127.0.0.1:") for port in latchkey["ports"])
    # Every secret file the config names is one of the service's Compose secrets.
    config = yaml.safe_load(CONFIG.read_text())
    named = {r.name for r in references(config)}
    assert named == {f"/run/secrets/{name}" for name in latchkey["secrets"]}
    assert set(latchkey["secrets"]) <= set(spec["secrets"])
    # The token store is in the named volume.
    [tokens] = [v.split(":")[1] for v in latchkey["volumes"] if v.startswith("tokens:")]
    assert config["store"]["path"].startswith(tokens + "/")
    # The sample runs the repository's script, mounted read-only, on the port the config calls.
    assert sample["image"] == "python:3.11-slim" and "../Scripts:/opt/scripts:ro" in sample["volumes"]
    assert sample["command"] == ["python3", "/opt/scripts/sample-oauth-api.py", "--listen", "0.0.0.0:9000"]
    assert config["identities"]["demo"]["token_url"] == "http://sample-api:9000/oauth/token"


@pytest.fixture
def sample_api(tmp_path):
    """Scripts/sample-oauth-api.py on a free loopback port; its base URL."""
    if not SAMPLE.exists():
        pytest.skip(f"{SAMPLE.relative_to(REPO)} is not in this tree")
    port_file = tmp_path / "sample.port"
    process = subprocess.Popen([sys.executable, str(SAMPLE), "--listen", "127.0.0.1:0", "--port-file", str(port_file),
                                "--quiet"], stdin=subprocess.DEVNULL)
    try:
        assert wait_until(port_file.exists, timeout=15), "the sample API did not start"
        yield f"http://127.0.0.1:{port_file.read_text().strip()}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_config_logs_in_to_the_sample_and_calls_its_api(latchkey, tmp_path, sample_api):
    made = materialise(CONFIG.read_text(), tmp_path / "compose")
    for name, value in DEMO_SECRETS.items():
        made.path(f"/run/secrets/{name}").write_text(value)
    check = latchkey.run(["check", "--config", str(made.config)])
    assert check.returncode == 0, check.stderr

    cfg = yaml.safe_load(made.config.read_text().replace("http://sample-api:9000", sample_api))
    cfg["listeners"] = [{"name": "main"}]          # 0.0.0.0:8080 in the container
    cfg["store"]["path"] = str(tmp_path / "tokens")
    proxy = latchkey.serve(cfg)
    me = proxy.get("/api/me")
    assert me.status == 200 and me.json()["user"] == "demo", me
    assert proxy.get("/api/items").status == 200
