"""`latchkey exec` through the real binary: the command line, a run to the end or a run in
the background, and what the child is given.

    done = run_exec(latchkey, ["curl", "-sS", "https://api.test/x"], cfg=forward_config(api))
    done.returncode, done.stdout, done.stderr      # the child's status and output; exec's logs on stderr
    p = start_exec(latchkey, [sys.executable, "-c", CODE], cfg=cfg)   # a LatchkeyProcess (signals)
    env = parse_env(run_exec(latchkey, ["env"], cfg=cfg).stdout)

Both run with the launcher's binary and environment (support.latchkey_environment), so the
token store and the local CA land under the test's directory: ca_path(latchkey) is what
NODE_EXTRA_CA_CERTS names, and the other trust variables name an exec bundle beside it
(is_exec_bundle).
"""

from __future__ import annotations

import copy
import fcntl
import os
import re
import subprocess
import termios
from pathlib import Path

from support import Launcher, LatchkeyProcess, free_port, latchkey_environment, wait_until

PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")
NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")
NO_PROXY = "localhost,127.0.0.1,::1"
# The variables that name the bundle (the system's roots and Latchkey's CA).
BUNDLE_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "AWS_CA_BUNDLE",
                    "CARGO_HTTP_CAINFO", "DENO_CERT")
# Every variable exec sets (LATCHKEY_URL only when some route has no host:).
EXEC_VARIABLES = PROXY_VARIABLES + NO_PROXY_VARIABLES + BUNDLE_VARIABLES + ("NODE_EXTRA_CA_CERTS", "NODE_USE_ENV_PROXY")

PROXY_URL = re.compile(r"^http://latchkey:(?P<secret>[^@\s]+)@127\.0\.0\.1:(?P<port>\d+)$")
LATCHKEY_URL = re.compile(r"^http://127\.0\.0\.1:(?P<port>\d+)$")
_ENV_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def ca_path(latchkey: Launcher) -> Path:
    """Latchkey's local CA alone (NODE_EXTRA_CA_CERTS), in the test's state directory."""
    return latchkey.workdir / "state" / "latchkey" / "ca" / "ca.pem"


def is_exec_bundle(latchkey: Launcher, path: str) -> bool:
    """Whether path is one of exec's bundles (the parent's roots plus Latchkey's CA), which
    are named after their content (bundle-<16 hex digits>.pem), beside ca.pem."""
    return Path(path).parent == ca_path(latchkey).parent and re.fullmatch(r"bundle-[0-9a-f]{16}\.pem", Path(path).name) is not None


def with_listen(cfg: dict) -> dict:
    """A copy of cfg whose listeners have an address: the configuration needs one, and exec
    binds none of them (each gets a free loopback port, so a test can check that)."""
    cfg = copy.deepcopy(cfg)
    for listener in cfg.get("listeners", []):
        listener.setdefault("listen", f"127.0.0.1:{free_port()}")
    return cfg


def exec_args(latchkey: Launcher, command: list, cfg: dict | None = None, flags: list | None = None) -> list:
    """`exec [--config FILE] FLAGS -- COMMAND...`; cfg is written into the test's directory."""
    args = ["exec"]
    if cfg is not None:
        args += ["--config", str(latchkey.write_config(with_listen(cfg)))]
    return args + list(flags or []) + ["--", *[str(a) for a in command]]


def run_exec(latchkey: Launcher, command: list, cfg: dict | None = None, flags: list | None = None,
             env: dict | None = None, timeout: float = 60, input: str | None = None) -> subprocess.CompletedProcess:
    """Runs `latchkey exec` to the end, with `input` on its stdin (else /dev/null); stdout
    and stderr as text."""
    stdin = {} if input is not None else {"stdin": subprocess.DEVNULL}
    return subprocess.run([str(latchkey.binary)] + exec_args(latchkey, command, cfg, flags), input=input, **stdin,
                          capture_output=True, text=True, timeout=timeout, env=latchkey_environment(latchkey.workdir, env),
                          cwd=latchkey.workdir)


def start_exec(latchkey: Launcher, command: list, cfg: dict | None = None, flags: list | None = None,
               env: dict | None = None) -> LatchkeyProcess:
    """Starts `latchkey exec` in the background, in a session of its own (so a signal the
    test sends reaches exec alone, never the child directly); its output goes to the
    process's log files. Wait for it with wait_exit()."""
    p = latchkey.start(exec_args(latchkey, command, cfg, flags), env=env)
    return p


def start_exec_on_terminal(latchkey: Launcher, command: list, cfg: dict | None = None) -> tuple[subprocess.Popen, int]:
    """`latchkey exec` as a shell runs a job at a terminal: in a session of its own whose
    controlling terminal is a new pseudo-terminal, exec's process group in the foreground.
    Returns the process and the terminal's master side (writing b"\\x03" there is Ctrl-C).
    The caller kills the process if the test fails before it exits."""
    master, slave = os.openpty()

    def take_the_terminal() -> None:  # in the child, after setsid: stdin becomes the controlling terminal
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    try:
        proc = subprocess.Popen([str(latchkey.binary)] + exec_args(latchkey, command, cfg), stdin=slave, stdout=slave,
                                stderr=slave, start_new_session=True, preexec_fn=take_the_terminal,
                                env=latchkey_environment(latchkey.workdir, None), cwd=latchkey.workdir)
    finally:
        os.close(slave)
    return proc, master


def parse_env(text: str) -> dict:
    """`env` output (NAME=value a line) as a dict; asserts that no name comes twice."""
    found: dict = {}
    for line in text.splitlines():
        m = _ENV_LINE.match(line)
        if not m:
            continue
        assert m.group(1) not in found, f"{m.group(1)} appears twice in the environment:\n{text}"
        found[m.group(1)] = m.group(2)
    return found


def wait_while_running(p: LatchkeyProcess, predicate, timeout: float = 30.0, what: str = "the child to get going"):
    """Polls predicate while `latchkey exec` runs; fails at once, with its log, if exec exits
    first or the time runs out. Returns predicate's value."""
    found = wait_until(lambda: predicate() or not p.alive(), timeout)
    value = predicate()
    assert value, (f"waited for {what}, but latchkey exec "
                   + (f"exited with {p.proc.returncode}" if not p.alive() else f"still had not after {timeout}s")
                   + f"; log:\n{p.log_tail()}")
    return value
