"""Configs/kubernetes/: the manifests pass kubernetes-validate (strict: unknown fields are
errors) against the first Kubernetes with native sidecars on by default and a recent one,
the pod has the shape the README promises, and the Latchkey config in the ConfigMap works
with the files the pod gives it: every path it names is a Secret item, and with those files
laid out as the kubelet lays them out (root's, 0440, in the pod's fsGroup), `latchkey check`
and `latchkey status` (which opens the token store with its key) pass as the pod's user."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from example_configs import configmap_configs, materialise, references
from support import REPO

MANIFESTS = sorted((REPO / "Configs" / "kubernetes").glob("*.yaml"))
VALIDATOR = Path(sys.executable).parent / "kubernetes-validate"
KUBERNETES_VERSIONS = ["1.29.0", "1.37.0"]  # native sidecars on by default since 1.29
UID = 10001  # the image's user (Docker/Dockerfile)


def documents() -> list[dict]:
    return [d for path in MANIFESTS for d in yaml.safe_load_all(path.read_text()) if d]


def pod_spec() -> dict:
    [deployment] = [d for d in documents() if d["kind"] == "Deployment"]
    return deployment["spec"]["template"]["spec"]


def latchkey_container() -> dict:
    [sidecar] = [c for c in pod_spec()["initContainers"] if c.get("restartPolicy") == "Always"]
    return sidecar


def validate(paths, version: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(VALIDATOR), "--strict", "--kubernetes-version", version, *map(str, paths)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_the_manifests_validate(version):
    assert {p.name for p in MANIFESTS} >= {"configmap.yaml", "deployment.yaml"}
    result = validate(MANIFESTS, version)
    assert result.returncode == 0, result.stdout + result.stderr


def test_validation_refuses_a_misspelt_field(tmp_path):
    """The control of the test above: strict validation sees what kubectl would drop."""
    broken = tmp_path / "deployment.yaml"
    broken.write_text((REPO / "Configs/kubernetes/deployment.yaml").read_text()
                      .replace("readOnlyRootFilesystem", "readOnlyRootFilesytem"))
    result = validate([broken], KUBERNETES_VERSIONS[-1])
    assert result.returncode != 0 and "readOnlyRootFilesytem" in result.stdout + result.stderr


def test_latchkey_is_a_native_sidecar_probed_on_health_and_readiness():
    sidecar = latchkey_container()
    assert sidecar["args"] == ["serve", "--config", "/etc/latchkey/latchkey.yaml"]
    assert sidecar["livenessProbe"]["httpGet"]["path"] == "/.latchkey/health"
    assert sidecar["readinessProbe"]["httpGet"]["path"] == "/.latchkey/ready"
    # The kubelet probes the pod's IP: the probe port is a listener on all addresses that
    # no route uses.
    [config_text] = configmap_configs(documents()).values()
    config = yaml.safe_load(config_text)
    [port] = [p["containerPort"] for p in sidecar["ports"] if p["name"] == sidecar["livenessProbe"]["httpGet"]["port"]]
    [probes] = [l for l in config["listeners"] if l["listen"] == f"0.0.0.0:{port}"]
    assert all(probes["name"] not in route["listeners"] for route in config["routes"])
    # The app reaches Latchkey on the pod's loopback.
    [app] = pod_spec()["containers"]
    assert any(l["listen"].startswith("127.0.0.1:") for l in config["listeners"])
    assert {"name": "API_BASE_URL", "value": "http://127.0.0.1:8080/api"} in app["env"]


def test_every_container_runs_restricted_with_resources():
    spec = pod_spec()
    pod = spec["securityContext"]
    assert pod["runAsNonRoot"] is True and pod["runAsUser"] == UID and pod["seccompProfile"] == {"type": "RuntimeDefault"}
    for container in spec["initContainers"] + spec["containers"]:
        context = container["securityContext"]
        assert context["allowPrivilegeEscalation"] is False, container["name"]
        assert context["readOnlyRootFilesystem"] is True, container["name"]
        assert context["capabilities"] == {"drop": ["ALL"]}, container["name"]
        assert {"cpu", "memory"} <= set(container["resources"]["requests"]), container["name"]
        assert "memory" in container["resources"]["limits"], container["name"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert all(v["secret"]["defaultMode"] == 0o400 for v in volumes.values() if "secret" in v)


def mounted_files() -> dict[str, tuple[str, str]]:
    """What each path in the Latchkey container comes from: (volume name, item path)."""
    volumes = {v["name"]: v for v in pod_spec()["volumes"]}
    files = {}
    for mount in latchkey_container()["volumeMounts"]:
        volume = volumes[mount["name"]]
        if "secret" in volume:
            for item in volume["secret"]["items"]:
                files[f"{mount['mountPath']}/{item['path']}"] = (mount["name"], item["key"])
    return files


@pytest.fixture
def pod_directory():
    """A directory the pod's uid can reach (pytest's own are root's, 0700)."""
    path = Path(tempfile.mkdtemp(prefix="latchkey-pod-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def as_pod_user(binary: Path, args: list, env: dict) -> subprocess.CompletedProcess:
    """Runs latchkey as the pod's user: uid 10001, group 10001 (runAsGroup, and fsGroup,
    which the kubelet adds as a supplementary group), no other group."""
    return subprocess.run(["setpriv", f"--reuid={UID}", f"--regid={UID}", f"--groups={UID}", str(binary), *args],
                          capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)


@pytest.mark.skipif(os.geteuid() != 0, reason="taking the pod's uid needs root (CI runs as root)")
def test_the_embedded_config_works_with_the_files_the_pod_gives_it(latchkey_bin, pod_directory):
    [config_text] = configmap_configs(documents()).values()
    config = yaml.safe_load(config_text)
    secret_files = mounted_files()
    # Every file the config names is an item of the Secret mounted in the container.
    for reference in references(config):
        assert reference.kind == "file", reference
        assert reference.name in secret_files, reference

    made = materialise(config_text, pod_directory)
    # As the kubelet lays out a Secret with defaultMode 0400 for a pod with fsGroup 10001:
    # root's, in group 10001, with group read added (0440).
    for path in secret_files:
        os.chown(made.path(path), 0, UID)
        made.path(path).chmod(0o440)
    for directory in {made.path(p).parent for p in secret_files} | {made.config.parent}:
        directory.chmod(0o755)
    made.config.chmod(0o644)
    # The token store in the emptyDir "tokens", which fsGroup makes the pod's.
    tokens = pod_directory / "var-lib-latchkey"
    tokens.mkdir()
    os.chown(tokens, UID, UID)
    made.config.write_text(made.config.read_text().replace(config["store"]["path"], str(tokens / "tokens")))
    env = {"PATH": os.environ["PATH"], "HOME": str(tokens), **made.env}

    check = as_pod_user(latchkey_bin, ["check", "--config", str(made.config)], env)
    assert check.returncode == 0, check.stderr
    # status opens the token store with the store key: the Secret's file, as mounted.
    status = as_pod_user(latchkey_bin, ["status", "--config", str(made.config)], env)
    assert status.returncode == 0, status.stderr

    # A key file that every user may read is refused, with the chmod that fixes it.
    key_file = made.path(config["store"]["key_file"])
    key_file.chmod(0o444)
    refused = as_pod_user(latchkey_bin, ["status", "--config", str(made.config)], env)
    assert refused.returncode == 1, refused.stderr
    assert f"key file {key_file} is accessible by others (mode 0444); run chmod 440 {key_file}" in refused.stderr
