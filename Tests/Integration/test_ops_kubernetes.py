"""Configs/kubernetes/: the manifests pass kubernetes-validate (strict: unknown fields are
errors) against the first Kubernetes with native sidecars on by default and a recent one,
the pod has the shape the README promises, and the Latchkey config in the ConfigMap works
with the files the pod gives it: every path it names is a Secret item or the init
container's copy, and with those files laid out as the kubelet lays them out, `latchkey
check` and `latchkey status` (which opens the token store with its key) pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from example_configs import configmap_configs, materialise, references, rewrite_paths
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


def copy_step() -> dict:
    [copy] = [c for c in pod_spec()["initContainers"] if c.get("restartPolicy") != "Always"]
    return copy


def test_the_embedded_config_works_with_the_files_the_pod_gives_it(latchkey, tmp_path):
    [config_text] = configmap_configs(documents()).values()
    config = yaml.safe_load(config_text)
    secret_files = mounted_files()
    command = copy_step()["command"]
    key_file = config["store"]["key_file"]
    # Every file the config names is a Secret item mounted in the container, except the
    # store key, which the init container copies there from one.
    for reference in references(config):
        assert reference.kind == "file", reference
        assert reference.name in secret_files or reference.name == key_file == command[-1], reference
    assert command[:3] == ["install", "-m", "0400"] and command[-2] in secret_files

    made = materialise(config_text, tmp_path)
    # As the kubelet leaves them with fsGroup: readable by the pod's group (0440).
    made.path(command[-2]).write_text(made.path(key_file).read_text())
    made.path(key_file).unlink()
    for path in secret_files:
        made.path(path).chmod(0o440)
    moved = {p: str(made.path(p)) for p in (command[-2], command[-1])}
    subprocess.run([rewrite_paths(arg, moved) for arg in command], check=True, timeout=30)
    assert made.path(key_file).stat().st_mode & 0o777 == 0o400

    # The config's store path is in the tokens emptyDir; here, in the test's directory.
    store = str(tmp_path / "var-lib-latchkey" / "tokens")
    made.config.write_text(made.config.read_text().replace(config["store"]["path"], store))
    check = latchkey.run(["check", "--config", str(made.config)])
    assert check.returncode == 0, check.stderr
    status = latchkey.run(["status", "--config", str(made.config)])
    assert status.returncode == 0, status.stderr

    # Why the copy: the Secret's own file, group-readable, is no key file Latchkey accepts.
    made.config.write_text(made.config.read_text().replace(str(made.path(key_file)), str(made.path(command[-2]))))
    refused = latchkey.run(["status", "--config", str(made.config)])
    assert refused.returncode == 1 and "is accessible by others (mode 0440)" in refused.stderr, refused.stderr
