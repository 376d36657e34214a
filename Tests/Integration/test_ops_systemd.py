"""Configs/systemd/latchkey.service: systemd's own checks of the unit (`systemd-analyze
verify`, `systemd-analyze security --offline`), and the proxy run the way the unit confines
it, as far as a machine without systemd as PID 1 can: under its system call filter (every
call it makes, traced with strace, is one the filter allows) and with writable-executable
memory refused by the kernel (PR_SET_MDWE, what MemoryDenyWriteExecute= asks of it)."""

from __future__ import annotations

import base64
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from example_configs import materialise
from support import REPO, Launcher, dump_yaml

UNIT = REPO / "Configs" / "systemd" / "latchkey.service"
CONFIG = REPO / "Configs" / "systemd" / "latchkey.yaml"

# The hardening the unit must keep, directive by directive (a directive given twice, as
# SystemCallFilter, is listed with each of its values).
HARDENING = [
    "DynamicUser=yes", "UMask=0077", "StateDirectoryMode=0700",
    "NoNewPrivileges=yes", "CapabilityBoundingSet=", "AmbientCapabilities=", "ProtectSystem=strict",
    "ProtectHome=yes", "PrivateTmp=yes", "PrivateDevices=yes", "PrivateUsers=yes", "ProtectHostname=yes",
    "ProtectClock=yes", "ProtectKernelTunables=yes", "ProtectKernelModules=yes", "ProtectKernelLogs=yes",
    "ProtectControlGroups=yes", "ProtectProc=invisible", "ProcSubset=pid",
    "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX", "RestrictNamespaces=yes", "RestrictRealtime=yes",
    "RestrictSUIDSGID=yes", "LockPersonality=yes", "MemoryDenyWriteExecute=yes", "PrivateMounts=yes",
    "RemoveIPC=yes", "SystemCallArchitectures=native", "SystemCallFilter=@system-service",
    "SystemCallFilter=~@privileged",
]
# What `systemd-analyze security` still marks, each for a reason: a proxy reaches its
# upstreams over the network (PrivateNetwork=, IPAddressDeny=, the Internet families) and
# serves on Unix sockets too; it runs the host's binaries (RootDirectory=); ProtectClock=
# leaves read access to the RTC (DeviceAllow=); libdispatch sets its threads' nice values
# (SystemCallFilter=~@resources).
ACCEPTED = {"RootDirectory=/RootImage=", "PrivateNetwork=", "IPAddressDeny=", "RestrictAddressFamilies=~AF_UNIX",
            "RestrictAddressFamilies=~AF_(INET|INET6)", "DeviceAllow=", "SystemCallFilter=~@resources"}
# The unit is rated 1.2 ("OK", on a scale to 10); --threshold= takes tenths.
THRESHOLD = 12


def unit_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def installable(tmp_path: Path, latchkey_bin: Path, text: str | None = None) -> Path:
    """The unit under its own name in a directory of its own, its ExecStart pointing at the
    built binary (verify wants the executable to exist)."""
    text = UNIT.read_text() if text is None else text
    path = tmp_path / "unit" / "latchkey.service"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace("/usr/local/bin/latchkey", str(latchkey_bin)))
    return path


def verify(unit: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60)


def security(unit: Path) -> tuple[int, float, set[str]]:
    """`systemd-analyze security --offline`: its exit status against THRESHOLD, the overall
    exposure, and the names of the checks it marks as failed."""
    result = subprocess.run(["systemd-analyze", "security", "--offline=true", f"--threshold={THRESHOLD}", "--no-pager",
                             str(unit)], capture_output=True, text=True, timeout=60)
    exposure = re.search(r"Overall exposure level for latchkey\.service: (\d+\.\d+)", result.stdout)
    assert exposure, result.stdout + result.stderr
    failed = {line.split()[1] for line in result.stdout.splitlines() if line.startswith("✗")}
    return result.returncode, float(exposure.group(1)), failed


# ----- systemd-analyze --------------------------------------------------------------------

def test_the_unit_verifies_without_a_word(latchkey_bin, tmp_path):
    result = verify(installable(tmp_path, latchkey_bin))
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_verify_reports_a_misspelt_directive(latchkey_bin, tmp_path):
    """The control of the test above: systemd ignores a directive it does not know (and
    exits 0), so silence is what the test asserts."""
    text = UNIT.read_text().replace("ProtectSystem=strict", "ProtectSytem=strict")
    result = verify(installable(tmp_path, latchkey_bin, text))
    assert "Unknown key" in result.stderr and "ProtectSytem" in result.stderr, result.stderr


def test_the_unit_runs_the_config_and_keeps_the_store_where_the_config_says(latchkey_bin):
    lines = unit_lines(UNIT.read_text())
    assert "ExecStart=/usr/local/bin/latchkey serve --config /etc/latchkey/latchkey.yaml" in lines
    assert "ExecReload=/bin/kill -HUP $MAINPID" in lines
    assert "LoadCredential=latchkey-store-key:/etc/latchkey/store.key" in lines
    assert "StateDirectory=latchkey" in lines and "Restart=on-failure" in lines
    config = yaml.safe_load(CONFIG.read_text())
    assert config["store"]["path"] == "/var/lib/latchkey"          # StateDirectory=latchkey
    assert "key_file" not in config["store"]                        # the credential instead
    # Every secret file the config names is a credential the unit loads.
    credentials = {line.split("=", 1)[1].split(":", 1)[0] for line in lines if line.startswith("LoadCredential=")}
    named = re.findall(r"/run/credentials/latchkey\.service/([\w.-]+)", CONFIG.read_text())
    assert named and set(named) <= credentials


def test_every_hardening_directive_is_there():
    lines = unit_lines(UNIT.read_text())
    assert [d for d in HARDENING if d not in lines] == []


def test_security_rates_the_unit_ok(latchkey_bin, tmp_path):
    status, exposure, failed = security(installable(tmp_path, latchkey_bin))
    assert status == 0 and exposure <= THRESHOLD / 10, exposure
    assert failed == ACCEPTED


# Directives whose loss `systemd-analyze security` cannot see (the presence test above keeps
# them): DynamicUser=yes implies the first five and leaves User=latchkey, a non-root user;
# the ambient set is empty by default; the state directory's mode is Latchkey's own
# requirement; the filter is rated through its first line.
NOT_RATED_ALONE = {"NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "RestrictSUIDSGID=yes", "RemoveIPC=yes",
                   "DynamicUser=yes", "AmbientCapabilities=", "StateDirectoryMode=0700", "SystemCallFilter=~@privileged"}


@pytest.mark.parametrize("directive", [d for d in HARDENING if d not in NOT_RATED_ALONE])
def test_security_notices_each_directive_removed(latchkey_bin, tmp_path, directive):
    text = "\n".join(line for line in UNIT.read_text().splitlines() if line.strip() != directive)
    status, exposure, failed = security(installable(tmp_path, latchkey_bin, text))
    assert failed - ACCEPTED or status != 0, f"without {directive}: exposure {exposure}, failed {failed}"


# ----- the confinement, at run time -------------------------------------------------------

PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN = 65, 1


def syscall_groups() -> dict[str, list[str]]:
    """systemd's named system call sets (@system-service, ...) as it prints them."""
    out = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True, timeout=60).stdout
    groups, current = {}, None
    for line in out.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), [])
        elif not line.strip():
            current = None
        elif current is not None and not line.strip().startswith("#"):
            current.append(line.strip())
    return groups


def allowed_syscalls() -> set[str]:
    """What the unit's SystemCallFilter= lines allow, read from the unit: the first line
    starts an allow list, a line with ~ takes its sets away."""
    groups = syscall_groups()

    def expand(name: str) -> set[str]:
        return set().union(*(expand(member) for member in groups[name])) if name.startswith("@") else {name}

    allowed: set[str] = set()
    for line in unit_lines(UNIT.read_text()):
        if line.startswith("SystemCallFilter="):
            value = line.split("=", 1)[1]
            names = set().union(*(expand(n) for n in value.lstrip("~").split()))
            allowed = allowed - names if value.startswith("~") else allowed | names
    return allowed


def mdwe_supported() -> bool:
    """Whether this kernel refuses writable-executable memory on request (Linux 6.3+): asked
    in a child, as the setting cannot be undone."""
    probe = ("import ctypes, mmap, sys\n"
             f"sys.exit(3) if ctypes.CDLL(None).prctl({PR_SET_MDWE}, {PR_MDWE_REFUSE_EXEC_GAIN}, 0, 0, 0) else None\n"
             "try: mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
             "except OSError: sys.exit(0)\n"
             "sys.exit(4)\n")
    return subprocess.run([sys.executable, "-c", probe], timeout=30).returncode == 0


def confining_wrapper(tmp_path: Path, latchkey_bin: Path, summary: Path) -> Path:
    """An executable that runs latchkey with writable-executable memory refused and every
    system call counted (strace -c, threads included)."""
    wrapper = tmp_path / "confined-latchkey"
    wrapper.write_text(f"""#!{sys.executable}
import ctypes, os, sys
if ctypes.CDLL(None).prctl({PR_SET_MDWE}, {PR_MDWE_REFUSE_EXEC_GAIN}, 0, 0, 0) != 0:
    sys.exit("PR_SET_MDWE refused")
os.execvp("strace", ["strace", "-f", "-c", "-o", {str(summary)!r}, {str(latchkey_bin)!r}] + sys.argv[1:])
""")
    wrapper.chmod(0o755)
    return wrapper


def traced_syscalls(summary: Path) -> set[str]:
    names = set()
    for line in summary.read_text().splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
            names.add(fields[-1])
    return names


def stop_traced(proxy) -> int | None:
    """SIGTERM to latchkey itself, not to the strace above it (which would detach and leave
    it running); strace exits with latchkey's status."""
    children = Path(f"/proc/{proxy.proc.pid}/task/{proxy.proc.pid}/children").read_text().split()
    assert len(children) == 1, children
    os.kill(int(children[0]), signal.SIGTERM)
    proxy.stopped_by_test = True
    return proxy.wait_exit(timeout=20)


def test_the_proxy_works_within_the_units_confinement(latchkey_bin, tmp_path, make_idp):
    """Configs/systemd/latchkey.yaml with the IdP's addresses: a token obtained, sealed with
    the store key from $CREDENTIALS_DIRECTORY, used, refreshed, and a clean stop."""
    if not mdwe_supported():
        pytest.skip("this kernel has no PR_SET_MDWE (Linux 6.3+)")
    idp = make_idp(access_token_seconds=3600)
    made = materialise(CONFIG.read_text(), tmp_path / "service")
    (made.path("/run/credentials/latchkey.service/client-secret")).write_text(idp.service_client.secret)
    credentials = made.path("/run/credentials/latchkey.service")
    (credentials / "latchkey-store-key").write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    cfg = yaml.safe_load(made.config.read_text())
    cfg["listeners"] = [{"name": "main"}]
    cfg["identities"]["api"].update(token_url=idp.token_url, client_id=idp.service_client.id)
    del cfg["identities"]["api"]["scope"]
    cfg["routes"][0]["upstream"] = idp.url
    store = tmp_path / "var-lib-latchkey"
    cfg["store"]["path"] = str(store)

    summary = tmp_path / "syscalls.txt"
    launcher = Launcher(confining_wrapper(tmp_path, latchkey_bin, summary), tmp_path)
    proxy = launcher.serve(cfg, env={"CREDENTIALS_DIRECTORY": str(credentials)})
    first = proxy.get("/api/echo")
    assert first.status == 200 and first.json()["client_id"] == idp.service_client.id, first
    idp.expire_access_tokens()
    assert proxy.get("/api/echo").status == 200
    assert idp.token_requests("client_credentials") == 2
    assert proxy.wait_log(r"token store directory=.* encrypted=\"yes, key from systemd credential")
    assert [p.name for p in store.iterdir() if p.name.endswith(".json")] == ["api.json"]
    assert stop_traced(proxy) == 0, proxy.log_tail()

    used = traced_syscalls(summary)
    assert {"epoll_wait", "accept4", "connect"} <= used, summary.read_text()   # the trace saw the work
    assert sorted(used - allowed_syscalls()) == [], summary.read_text()
