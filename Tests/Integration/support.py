"""Helpers shared by the integration tests: the latchkey process, config builders, polling,
log parsing. Fixtures wrapping these live in conftest.py."""

from __future__ import annotations

import atexit
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import yaml

from httpraw import Conn, Response

REPO = Path(__file__).resolve().parents[2]

# Distinctive secrets, so that a grep of the logs finds any leak.
TOKEN = "lk-itest-token-5b7e1d93"
TOKEN2 = "lk-itest-rotated-8c2f6a11"
SECRET = "lk-itest-inbound-secret-40e9"

START_TIMEOUT = float(os.environ.get("LATCHKEY_ITEST_START_TIMEOUT", "30"))
STOP_TIMEOUT = float(os.environ.get("LATCHKEY_ITEST_STOP_TIMEOUT", "20"))

_LISTEN_RE = re.compile(r'"?address"?\s*[=:]\s*"?(unix:[^\s",}]+|\[[0-9a-fA-F:.]+\]:\d+|[0-9A-Za-z.\-]+:\d+)')


def free_port() -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.05):
    """Polls predicate until it returns something truthy; returns that value or None."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


def dump_yaml(cfg: dict) -> str:
    return yaml.safe_dump(cfg, sort_keys=False, default_flow_style=False)


def bearer(credential: str = "api", header: str = "Authorization", template: str = "Bearer {token}") -> dict:
    return {"header": header, "value": template, "credential": credential}


def config(upstream_url: str | None = None, *, route: dict | None = None, routes: list | None = None,
           listeners: list | None = None, credentials: dict | None = None, **top) -> dict:
    """A config with one loopback listener `main` (address filled in at start), the
    credential `api` = TOKEN, and one route `api` on `/` injecting `Authorization: Bearer`.
    route= updates that route; routes= replaces the list; top-level keys pass through."""
    if routes is None:
        r = {"name": "api", "path": "/", "upstream": upstream_url, "inject": [bearer()]}
        r.update(route or {})
        routes = [r]
    cfg = {
        "listeners": listeners if listeners is not None else [{"name": "main"}],
        "credentials": credentials if credentials is not None else {"api": {"value": TOKEN}},
        "routes": routes,
    }
    cfg.update(top)
    return cfg


def latchkey_environment(workdir: Path, env: dict | None) -> dict:
    """The environment latchkey runs in: this one, with the token store under the test's
    own directory (so that tests never share tokens, and restarts within one test do) and
    no store key unless the test gives one."""
    e = dict(os.environ)
    for name in ("LATCHKEY_STORE_KEY", "CREDENTIALS_DIRECTORY"):
        e.pop(name, None)
    e["XDG_STATE_HOME"] = str(workdir / "state")
    e.update(env or {})
    return e


_ALL_PROCESSES: list = []


@atexit.register
def _kill_leftovers() -> None:
    """Never leave a latchkey running if pytest ends abruptly (timeouts, Ctrl-C)."""
    for p in _ALL_PROCESSES:
        if p.proc is not None and p.proc.poll() is None:
            p.proc.kill()


class LatchkeyProcess:
    """One running `latchkey serve`, its logs captured to files."""

    def __init__(self, binary: Path, workdir: Path, args: list, env: dict | None, label: str):
        self.binary = binary
        self.workdir = workdir
        self.args = args
        self.label = label
        self.stdout_path = workdir / f"{label}.stdout.log"
        self.stderr_path = workdir / f"{label}.stderr.log"
        self.env = latchkey_environment(workdir, env)
        self.proc: subprocess.Popen | None = None
        self.returncode: int | None = None
        self.addresses: dict[str, object] = {}  # listener name -> (host, port) or unix path
        self.stopped_by_test = False

    # ----- lifecycle --------------------------------------------------------------

    def spawn(self) -> None:
        self._out = open(self.stdout_path, "wb")
        self._err = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen([str(self.binary)] + self.args, stdout=self._out, stderr=self._err,
                                     stdin=subprocess.DEVNULL, env=self.env, cwd=self.workdir,
                                     start_new_session=True)
        _ALL_PROCESSES.append(self)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_exit(self, timeout: float) -> int | None:
        try:
            self.returncode = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        return self.returncode

    def send_signal(self, sig=signal.SIGTERM) -> None:
        if self.alive():
            self.proc.send_signal(sig)

    def stop(self, sig=signal.SIGTERM, timeout: float = STOP_TIMEOUT) -> int | None:
        """Sends sig and waits; returns the exit status, or None if it had to be killed."""
        self.stopped_by_test = True
        if self.proc is None:
            return None
        if self.proc.poll() is not None:
            self.returncode = self.proc.returncode
            return self.returncode
        self.proc.send_signal(sig)
        rc = self.wait_exit(timeout)
        if rc is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.returncode = None
        self._close_files()
        return rc

    def _close_files(self) -> None:
        for f in (getattr(self, "_out", None), getattr(self, "_err", None)):
            if f and not f.closed:
                f.close()

    # ----- addresses --------------------------------------------------------------

    @property
    def address(self):
        """The first listener's address: (host, port) or a Unix socket path."""
        return next(iter(self.addresses.values()))

    @property
    def host(self) -> str:
        return self.address[0]

    @property
    def port(self) -> int:
        return self.address[1]

    @property
    def host_header(self) -> str:
        addr = self.address
        if isinstance(addr, str):
            return "localhost"
        host = addr[0] if addr[0] not in ("0.0.0.0", "::") else "127.0.0.1"
        return f"[{host}]:{addr[1]}" if ":" in host else f"{host}:{addr[1]}"

    @property
    def base_url(self) -> str:
        return f"http://{self.host_header}"

    def connect_address(self, listener: str | None = None):
        addr = self.addresses[listener] if listener else self.address
        if isinstance(addr, tuple) and addr[0] in ("0.0.0.0", "::"):
            return ("127.0.0.1", addr[1])
        return addr

    def listening_addresses_from_log(self) -> list[str]:
        found = []
        for line in self.log().splitlines():
            if "listening" in line.lower():
                m = _LISTEN_RE.search(line)
                if m:
                    found.append(m.group(1))
        return found

    # ----- reload -----------------------------------------------------------------

    @property
    def config_path(self) -> Path:
        """The file `serve --config` runs with."""
        return Path(self.args[self.args.index("--config") + 1])

    def reload_outcomes(self) -> list[str]:
        """The `configuration reloaded` / `configuration not reloaded` lines so far."""
        return [line for line in self.log_lines() if re.search(r"configuration (not )?reloaded", line)]

    def reload(self, cfg: dict | str | None = None, timeout: float = 15.0) -> str:
        """Writes cfg over the config file (a dict: listeners without `listen` keep the
        address they were started with; a str: the YAML text as is), sends SIGHUP and waits
        for the reload's log line, which it returns."""
        if isinstance(cfg, dict):
            started = {l["name"]: l.get("listen") for l in yaml.safe_load(self.config_path.read_text())["listeners"]}
            for listener in cfg.get("listeners", []):
                if "listen" not in listener and started.get(listener.get("name")):
                    listener["listen"] = started[listener["name"]]
            cfg = dump_yaml(cfg)
        if cfg is not None:
            self.config_path.write_text(cfg)
        before = len(self.reload_outcomes())
        self.send_signal(signal.SIGHUP)
        found = wait_until(lambda: self.reload_outcomes()[before:], timeout)
        assert found, f"no reload line after SIGHUP; log tail:\n{self.log_tail()}"
        return found[0]

    # ----- requests ---------------------------------------------------------------

    def conn(self, listener: str | None = None, timeout: float = 15.0) -> Conn:
        return Conn(self.connect_address(listener), timeout=timeout)

    def request(self, method: str, target: str, headers=None, body: bytes | None = None,
                host: str | None = None, timeout: float = 30.0, listener: str | None = None) -> Response:
        """One request on a fresh connection (closed afterwards)."""
        with self.conn(listener, timeout=timeout) as c:
            c.request(method, target, headers=headers, body=body,
                      host=self.host_header if host is None else host)
            return c.read_response(method=method, timeout=timeout)

    def get(self, target: str, **kw) -> Response:
        return self.request("GET", target, **kw)

    # ----- logs -------------------------------------------------------------------

    def log(self) -> str:
        text = ""
        for p in (self.stdout_path, self.stderr_path):
            try:
                text += p.read_text(errors="replace")
            except FileNotFoundError:
                pass
        return text

    def log_lines(self) -> list[str]:
        return [line for line in self.log().splitlines() if line.strip()]

    def wait_log(self, pattern: str, timeout: float = 10.0) -> str | None:
        rx = re.compile(pattern)

        def find():
            for line in self.log_lines():
                if rx.search(line):
                    return line
            return None

        return wait_until(find, timeout)

    def log_tail(self, n: int = 40) -> str:
        return "\n".join(self.log_lines()[-n:])


def _can_connect(addr) -> bool:
    try:
        if isinstance(addr, str):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(1)
            s.connect(addr)
        else:
            if addr[0] in ("0.0.0.0", "::"):
                addr = ("127.0.0.1", addr[1])
            s = socket.create_connection(addr, timeout=1)
        s.close()
        return True
    except OSError:
        return False


def parse_listen(text: str):
    if text.startswith("unix:"):
        return text[len("unix:"):]
    host, _, port = text.rpartition(":")
    return (host.strip("[]"), int(port))


class StartError(AssertionError):
    pass


class Launcher:
    """Starts latchkey processes for one test and stops them at the end."""

    # Whether the binary supports `127.0.0.1:0` (binds an ephemeral port and logs the
    # address). None until the first start has found out; LATCHKEY_ITEST_PORT0=0/1 forces it.
    port0: bool | None = {"0": False, "1": True}.get(os.environ.get("LATCHKEY_ITEST_PORT0", "auto"))

    def __init__(self, binary: Path, workdir: Path):
        self.binary = binary
        self.workdir = workdir
        self.procs: list[LatchkeyProcess] = []
        self.counter = 0

    def _label(self) -> str:
        self.counter += 1
        return f"latchkey-{self.counter}"

    # ----- public API -------------------------------------------------------------

    def serve(self, cfg: dict, env: dict | None = None, extra_args: list | None = None,
              wait: bool = True) -> LatchkeyProcess:
        """`latchkey serve --config FILE`; listeners without `listen` get a loopback port."""
        tcp_auto = [l for l in cfg.get("listeners", []) if "listen" not in l]
        use_port0 = len(cfg.get("listeners", [])) == 1 and len(tcp_auto) == 1 and Launcher.port0 is not False
        if use_port0 and wait:
            tcp_auto[0]["listen"] = "127.0.0.1:0"
            proc = self._start_config(cfg, env, extra_args, wait, port0=True)
            if proc is not None:
                return proc
            tcp_auto[0].pop("listen")
        for l in tcp_auto:
            l["listen"] = f"127.0.0.1:{free_port()}"
        return self._start_config(cfg, env, extra_args, wait, port0=False)

    def quick(self, upstream: str, headers: list | None = None, extra: list | None = None,
              env: dict | None = None, listen: str | None = None, wait: bool = True) -> LatchkeyProcess:
        """`latchkey serve --listen ... --upstream URL --header ...` (the quick start)."""
        def args_for(addr: str) -> list:
            a = ["serve", "--listen", addr, "--upstream", upstream]
            for h in (headers if headers is not None else [f"Authorization: Bearer {TOKEN}"]):
                a += ["--header", h]
            return a + (extra or [])

        if listen is not None:
            return self._start(args_for(listen), env, {"main": parse_listen(listen)}, wait, port0=False)
        if Launcher.port0 is not False and wait:
            proc = self._start(args_for("127.0.0.1:0"), env, {"main": ("127.0.0.1", 0)}, wait, port0=True)
            if proc is not None:
                return proc
        addr = f"127.0.0.1:{free_port()}"
        return self._start(args_for(addr), env, {"main": parse_listen(addr)}, wait, port0=False)

    def start(self, args: list, env: dict | None = None) -> LatchkeyProcess:
        """Starts a command that runs a while and listens on nothing known in advance (e.g.
        `login`); its output goes to the process's log files."""
        return self._start(args, env, {}, wait=False, port0=False)

    def run(self, args: list, timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
        """Runs a short-lived command (e.g. `check`) and returns its result."""
        return subprocess.run([str(self.binary)] + args, capture_output=True, text=True, timeout=timeout,
                              env=latchkey_environment(self.workdir, env), cwd=self.workdir, stdin=subprocess.DEVNULL)

    def write(self, name: str, text: str) -> Path:
        p = self.workdir / name
        p.write_text(text)
        return p

    def write_config(self, cfg: dict, name: str | None = None) -> Path:
        return self.write(name or f"{self._label()}.yaml", dump_yaml(cfg))

    def stop_all(self) -> list[str]:
        """Stops every process still running with SIGTERM; returns problems found."""
        problems = []
        for p in self.procs:
            if p.proc is None or p.stopped_by_test:
                continue
            if p.proc.poll() is not None:
                continue  # exited on its own; tests that expected that checked it
            rc = p.stop(signal.SIGTERM)
            if rc != 0:
                problems.append(f"{p.label} exited with {rc} on SIGTERM (expected 0); log tail:\n{p.log_tail()}")
        return problems

    # ----- internals --------------------------------------------------------------

    def _start_config(self, cfg, env, extra_args, wait, port0):
        addresses = {}
        for i, l in enumerate(cfg.get("listeners", [])):
            addresses[l.get("name", f"listener{i}")] = parse_listen(l["listen"]) if "listen" in l else None
        path = self.write_config(cfg)
        return self._start(["serve", "--config", str(path)] + (extra_args or []), env, addresses, wait, port0)

    def _start(self, args, env, addresses, wait, port0) -> LatchkeyProcess | None:
        p = LatchkeyProcess(self.binary, self.workdir, args, env, self._label())
        p.addresses = dict(addresses)
        self.procs.append(p)
        p.spawn()
        if not wait:
            return p
        deadline = time.monotonic() + START_TIMEOUT
        if port0:
            # The actual port comes from the `listening ... address=HOST:PORT` log line.
            got = None
            port0_deadline = time.monotonic() + (START_TIMEOUT if Launcher.port0 else min(10.0, START_TIMEOUT))
            while time.monotonic() < port0_deadline and p.alive():
                found = [a for a in p.listening_addresses_from_log() if not a.endswith(":0")]
                if found:
                    got = found[0]
                    break
                time.sleep(0.05)
            if got is None:
                if Launcher.port0:
                    raise StartError(f"latchkey did not log a listening address with port 0 "
                                     f"(args {args}); log:\n{p.log_tail()}")
                # This binary does not support port 0 (or does not log it): fall back for good.
                p.stop(signal.SIGKILL, timeout=5)
                p.stopped_by_test = True
                Launcher.port0 = False
                return None
            Launcher.port0 = True
            name = next(iter(p.addresses))
            p.addresses[name] = parse_listen(got)
        for name, addr in p.addresses.items():
            if addr is None:
                continue
            while not _can_connect(addr):
                if not p.alive():
                    raise StartError(f"latchkey exited with {p.proc.returncode} before listening "
                                     f"(args {args}); log:\n{p.log_tail()}")
                if time.monotonic() > deadline:
                    raise StartError(f"latchkey did not accept connections on {addr} within "
                                     f"{START_TIMEOUT}s; log:\n{p.log_tail()}")
                time.sleep(0.05)
        return p


# ----- log parsing ----------------------------------------------------------------------

def json_lines(text: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def flatten(obj, prefix: str = "") -> dict:
    """{"a": {"b": 1}} -> {"a.b": 1}; used to find fields wherever a log handler nests them."""
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}{k}."))
    else:
        out[prefix[:-1]] = obj
    return out


def field(record: dict, *names):
    """The value of the first field whose last path component is one of names."""
    flat = flatten(record)
    for name in names:
        for k, v in flat.items():
            if k.split(".")[-1].lower() == name.lower():
                return v
    return None


class Background:
    """Runs fn in a thread; .result() returns its value or re-raises its exception."""

    def __init__(self, fn, *args, **kw):
        self._value = None
        self._error = None
        self._thread = threading.Thread(target=self._run, args=(fn, args, kw), daemon=True)
        self._thread.start()

    def _run(self, fn, args, kw):
        try:
            self._value = fn(*args, **kw)
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            self._error = e

    def result(self, timeout: float = 60):
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError("background call did not finish")
        if self._error:
            raise self._error
        return self._value
