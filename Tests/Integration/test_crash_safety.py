"""Crash safety of the token store, shown by killing: `latchkey serve` gets SIGKILL at a
random moment of a request storm, at least LATCHKEY_CRASH_KILLS (default 200) times, while
the rotating IdP (django-oauth-toolkit, refresh tokens rotated with grace period 0) keeps
its access tokens short (1 s) and the test keeps expiring them, so that refreshes and store
writes never stop. After each kill the store must be whole, and a restart on it must work.

The IdP records every token answer (which refresh token came in, which one went out), and
that record says what the store must hold. For the refresh token `s` in an identity's file
after a kill:

- live: the IdP issued nothing after `s`. The restart refreshes with `s`.
- lost in flight: the IdP issued a newer token (it rotated `s`), and no newer token was
  ever presented: the kill fell after the IdP took the refresh request (it commits the
  rotation whether or not its client lives to read the answer) and before the answer was
  renamed into the store. No client can close that window. The restart's refresh with `s`
  is refused (invalid_grant): the password identity logs in again by itself; the seeded
  refresh-token identity answers 401 login_required and is given a new refresh token.
- a bug: a token issued after `s` was presented. Latchkey used a refresh token before it
  was on disk, or the store went back to an older one: the restart presents a token that
  had been spent and replaced. The test fails.

The invalid_grant answers the IdP gave must be exactly one per lost-in-flight case. Between
kills, a reader snapshots the store files every few milliseconds: each must be a whole
file (what a kill at that instant would leave). Half the kills hit a store sealed with a
key. A SIGKILL leaves the page cache alone, so it cannot show a missing fsync; the syscall
order of a write is checked by
test_a_store_write_reaches_the_disk_before_it_replaces_the_file.

LATCHKEY_CRASH_SEED reproduces the kill moments of a failed run (printed on failure).
Deselect with -m "not crash"."""

from __future__ import annotations

import base64
import json
import os
import random
import re
import signal
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from idp_support import fetch
from support import config, wait_until
from test_oauth import identity_route, password_identity
from test_token_store import KEY

KILLS = int(os.environ.get("LATCHKEY_CRASH_KILLS", "200"))
SEED = int(os.environ.get("LATCHKEY_CRASH_SEED") or random.SystemRandom().randrange(1 << 32))
MAX_KILL_DELAY = 0.6  # seconds into the storm
STORM_CLIENTS = 3  # per identity
EXPIRE_EVERY = 0.02  # seconds between expiries of every access token
SNAPSHOT_EVERY = 0.002  # seconds between reads of the store files
IDENTITIES = ("password", "seeded")

pytestmark = pytest.mark.crash


def seeded_identity(idp, refresh_token: str) -> dict:
    """An identity with no credentials to log in with: a refresh token obtained elsewhere."""
    return {"grant": "refresh_token", "token_url": idp.token_url, "refresh_token": {"value": refresh_token},
            "client_id": idp.password_client.id, "client_secret": {"value": idp.password_client.secret}}


def new_seed(idp) -> str:
    """A refresh token obtained outside Latchkey, as a person would give one."""
    r = fetch(idp.token_url, basic=(idp.password_client.id, idp.password_client.secret),
              form={"grant_type": "password", "username": idp.username, "password": idp.password})
    assert r.status == 200, r.text
    return r.json()["refresh_token"]


def _b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def stored_refresh_token(path, identity: str, key: str | None) -> str | None:
    """The refresh token in an identity's store file; None when there is no file. Raises for
    a file that is not a whole store file (sealed exactly when there is a key)."""
    try:
        doc = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    assert doc["format"] == "latchkey-token-v1", doc
    assert ("cipher" in doc) == (key is not None), f"{path} sealed: {'cipher' in doc}, key given: {key is not None}"
    if key is not None:
        aad = f"latchkey-token-v1\0aes-256-gcm\0{identity}".encode()
        doc = json.loads(AESGCM(base64.b64decode(key)).decrypt(_b64url(doc["nonce"]), _b64url(doc["ciphertext"]) + _b64url(doc["tag"]), aad))
    return doc["token"]["refresh_token"]


@dataclass
class Verdict:
    """What the kill left of one identity: the refresh token on disk (None: no file) and
    whether it is live, lost in flight (a newer answer died with the process) or none."""
    stored: str | None
    state: str  # live | lost | none
    answered_at: float | None = None  # lost: when the IdP sent the answer that died


def judge(answers: list[dict], stored: str | None) -> Verdict:
    """The verdict on `stored` from the IdP's record of one identity's token answers; raises
    when Latchkey had presented a token newer than the stored one."""
    start = -1
    if stored is not None:
        issued = [i for i, a in enumerate(answers) if a["issued"] == stored]
        assert issued, "the store holds a refresh token the IdP never issued"
        start = issued[0]
    later = [a for a in answers[start + 1:] if a["issued"]]
    newer = {a["issued"] for a in later}
    used = [a for a in answers if a["presented"] in newer]
    assert not used, (f"Latchkey presented {len(used)} refresh token(s) issued after the one its store holds: a token "
                      "was used before it was persisted, or the store lost a write")
    if stored is None:
        return Verdict(None, "none")
    if not newer:
        return Verdict(stored, "live")
    return Verdict(stored, "lost", later[-1]["answered_at"])


@dataclass
class Tally:
    delays: list = field(default_factory=list)
    sealed: int = 0
    mid_write: int = 0
    storm_refreshes: int = 0
    snapshots: int = 0
    recovered: dict = field(default_factory=dict)  # "identity how" -> count
    # Lost in flight: how long before the kill the IdP sent the answer that died (negative:
    # the IdP answered after the kill, the request was still at the IdP).
    lost_ages: list = field(default_factory=list)

    def count(self, key: str) -> None:
        self.recovered[key] = self.recovered.get(key, 0) + 1

    def line(self, kills: int) -> str:
        d, r = self.delays, self.recovered
        sent = [age * 1000 for age in self.lost_ages if age >= 0]
        before = f" (median {statistics.median(sent):.0f} ms, at most {max(sent):.0f} ms)" if sent else ""
        return (f"crash safety: {kills} kills (seed {SEED}, {self.sealed} on a sealed store) "
                f"{min(d) * 1000:.0f}-{max(d) * 1000:.0f} ms into the storms (median {statistics.median(d) * 1000:.0f}), "
                f"{self.mid_write} of them mid-write, {self.storm_refreshes} refreshes in the storms; "
                f"password identity: {r.get('password refresh', 0)} recovered by refresh token, "
                f"{r.get('password reauth', 0)} by re-authentication ({r.get('password lost', 0)} lost in flight, "
                f"{r.get('password none', 0)} with nothing stored yet); "
                f"seeded identity: {r.get('seeded refresh', 0)} by refresh token, {r.get('seeded lost', 0)} lost in flight "
                f"and given a new seed; lost in flight: {len(self.lost_ages) - len(sent)} answered after the kill, "
                f"{len(sent)} before it{before}; {self.snapshots} store snapshots, all whole")


class Lane:
    """One store, plaintext or sealed, with its two identities; each identity has an IdP of
    its own, so that the IdP's record of token answers is that identity's history."""

    def __init__(self, name: str, latchkey, make_idp, key: str | None):
        self.latchkey = latchkey
        self.key = key
        self.state = latchkey.workdir / name
        self.directory = self.state / "latchkey"
        self.env = {"XDG_STATE_HOME": str(self.state), **({"LATCHKEY_STORE_KEY": key} if key else {})}
        self.idps = {identity: make_idp(access_token_seconds=1) for identity in IDENTITIES}
        self.seed = new_seed(self.idps["seeded"])
        self.answers = {identity: [] for identity in IDENTITIES}
        self.proxy = None
        self.killed = None  # the process the last kill ended

    def start(self) -> None:
        idps = self.idps
        routes = [dict(identity_route(i, path=f"/{i}", upstream=idps[i].url + "/api"), name=i) for i in IDENTITIES]
        identities = {"password": password_identity(idps["password"]), "seeded": seeded_identity(idps["seeded"], self.seed)}
        self.proxy = self.latchkey.serve(config(routes=routes, credentials={}, identities=identities), env=self.env)

    def new_answers(self, identity: str) -> list[dict]:
        """The identity's token answers since the last call (all of them are kept)."""
        seen = self.answers[identity]
        fresh = self.idps[identity].token_answers(since=len(seen))
        seen.extend(fresh)
        return fresh

    def stored(self, identity: str) -> str | None:
        return stored_refresh_token(self.directory / f"{identity}.json", identity, self.key)

    def leftovers(self, marker: str) -> set[str]:
        return {p.name for p in self.directory.iterdir() if marker in p.name} if self.directory.exists() else set()


class Storm:
    """Clients hammering both identities, every access token expired every EXPIRE_EVERY,
    and a reader checking the store files, until stopped."""

    def __init__(self, lane: Lane):
        self.lane = lane
        self.stop = threading.Event()
        self.snapshots = 0
        self.broken: list[str] = []
        workers = [self._client] * STORM_CLIENTS * len(IDENTITIES) + [self._expirer, self._reader]
        self.threads = [threading.Thread(target=w, args=(n,), daemon=True) for n, w in enumerate(workers)]
        for t in self.threads:
            t.start()

    def end(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(10)

    def _client(self, n: int) -> None:
        path = f"/{IDENTITIES[n % len(IDENTITIES)]}/storm/{n}"
        while not self.stop.is_set():
            try:
                self.lane.proxy.get(path, timeout=2)
            except Exception:  # noqa: BLE001 - the proxy is killed under it
                pass

    def _expirer(self, _: int) -> None:
        while not self.stop.wait(EXPIRE_EVERY):
            for idp in self.lane.idps.values():
                idp.expire_access_tokens()

    def _reader(self, _: int) -> None:
        while not self.stop.wait(SNAPSHOT_EVERY):
            for identity in IDENTITIES:
                try:
                    self.lane.stored(identity)
                    self.snapshots += 1
                except Exception as e:  # noqa: BLE001 - reported by the test
                    self.broken.append(f"{identity}: {type(e).__name__}: {e}")


def kill_timeout() -> float:
    return 120 + 2.5 * KILLS


@pytest.mark.timeout(kill_timeout())
def test_sigkill_during_refresh_storms_never_breaks_the_store(latchkey, make_idp, capsys):
    rng = random.Random(SEED)
    tally = Tally()
    lanes = [Lane("plain", latchkey, make_idp, None), Lane("sealed", latchkey, make_idp, KEY)]
    for lane in lanes:
        lane.start()
        for identity in IDENTITIES:
            assert lane.proxy.get(f"/{identity}/first").status == 200
            lane.new_answers(identity)
    kill = 0
    lane = lanes[0]
    delay = 0.0

    def context() -> str:
        where = f"kill {kill + 1} of {KILLS}, {'sealed' if lane.key else 'plain'} store, {delay * 1000:.0f} ms into the storm"
        logs = [f"{p.label} log tail:\n{p.log_tail(15)}" for p in (lane.killed, lane.proxy) if p is not None]
        return "\n".join([f"{where}; LATCHKEY_CRASH_SEED={SEED} reproduces the kill moments", *logs])

    try:
        for kill in range(KILLS):
            lane = lanes[kill % 2]
            delay = rng.uniform(0, MAX_KILL_DELAY)
            killed_at = storm_and_kill(lane, delay, tally)
            verdicts, left = inspect(lane)
            tally.lost_ages += [killed_at - v.answered_at for v in verdicts.values() if v.state == "lost"]
            tally.mid_write += bool(left)
            restart_and_recover(lane, verdicts, left, tally)
            tally.delays.append(delay)
            tally.sealed += lane.key is not None
    except AssertionError as e:
        raise AssertionError(f"{e}\n{context()}") from e
    refused = {i: sum(a["error"] == "invalid_grant" for lane in lanes for a in lane.answers[i]) for i in IDENTITIES}
    for identity in IDENTITIES:
        assert refused[identity] == tally.recovered.get(f"{identity} lost", 0), (identity, refused, tally.recovered)
    assert tally.storm_refreshes > KILLS, f"the storms caused only {tally.storm_refreshes} refreshes"
    with capsys.disabled():
        print("\n" + tally.line(KILLS))


def storm_and_kill(lane: Lane, delay: float, tally: Tally) -> float:
    storm = Storm(lane)
    time.sleep(delay)
    killed_at = time.time()
    lane.killed = lane.proxy
    assert lane.proxy.stop(signal.SIGKILL) == -signal.SIGKILL
    storm.end()
    assert not storm.broken, f"a reader found a store file that is not whole: {storm.broken[:3]}"
    tally.snapshots += storm.snapshots
    for identity in IDENTITIES:
        tally.storm_refreshes += sum(a["grant_type"] == "refresh_token" for a in lane.new_answers(identity))
    return killed_at


def inspect(lane: Lane) -> tuple[dict[str, Verdict], set[str]]:
    """What the kill left: a verdict per identity and the temporary files of a write it cut."""
    assert not lane.leftovers(".corrupt-"), "a store file was moved aside as corrupt"
    verdicts = {}
    for identity in IDENTITIES:
        stored = lane.stored(identity)
        # With no file, the seeded identity starts from its configured refresh token.
        verdicts[identity] = judge(lane.answers[identity], stored if stored or identity == "password" else lane.seed)
    return verdicts, lane.leftovers(".tmp-")


def restart_and_recover(lane: Lane, verdicts: dict[str, Verdict], left: set[str], tally: Tally) -> None:
    for idp in lane.idps.values():
        idp.expire_access_tokens()  # the stored access token is refused: its refresh token must serve
    lane.start()
    assert not lane.leftovers(".corrupt-"), "a store file was moved aside as corrupt at the restart"
    assert not (lane.leftovers(".tmp-") & left), f"the restart left the temporary files of the cut write: {left}"
    for identity in IDENTITIES:
        recover(lane, identity, verdicts[identity], tally)


def recover(lane: Lane, identity: str, verdict: Verdict, tally: Tally) -> None:
    """The identity's first request after the restart, and the token answers it caused: a
    refresh with the stored token, refused only when that was lost in flight."""
    r = lane.proxy.get(f"/{identity}/after-the-kill")
    answers = lane.new_answers(identity)
    assert answers, f"the restarted proxy answered {r.status} for {identity} without asking the IdP"
    first = answers[0]
    if verdict.state != "live":
        tally.count(f"{identity} {verdict.state}")
    if verdict.state == "none":  # the password identity before its first token was stored
        assert first["grant_type"] == "password" and first["status"] == 200 and r.status == 200, (r, answers)
        tally.count(f"{identity} reauth")
        return
    assert first["grant_type"] == "refresh_token" and first["presented"] == verdict.stored, (verdict, answers)
    if verdict.state == "live":
        assert first["status"] == 200 and r.status == 200, (first, r)
        tally.count(f"{identity} refresh")
        return
    assert first["error"] == "invalid_grant", (verdict, first)
    if identity == "password":
        assert r.status == 200 and answers[1]["grant_type"] == "password", (r, answers)
        tally.count("password reauth")
    else:
        reseed(lane, r)


def reseed(lane: Lane, refused) -> None:
    """The seeded identity lost its refresh token in flight: it says so, forgets the spent
    token, and works again from a new one."""
    assert refused.status == 401 and refused.json()["error"] == "login_required", refused
    assert lane.stored("seeded") is None, "the refused refresh token stayed in the store"
    assert lane.proxy.stop() == 0
    lane.seed = new_seed(lane.idps["seeded"])
    lane.start()
    r = lane.proxy.get("/seeded/re-seeded")
    answers = lane.new_answers("seeded")
    assert r.status == 200, r
    assert answers[-1]["presented"] == lane.seed and answers[-1]["status"] == 200, answers


# ----- what a kill cannot show: the order of a write's syscalls ---------------------------------

TRACED_CALLS = "openat,write,fsync,fdatasync,rename,renameat,renameat2"
_TRACE_LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*)$")
_FD_PATH = re.compile(r"\d+<([^>]*)>")


def durability_violations(trace: str, directory: str) -> tuple[list[str], int]:
    """Reads an `strace -f -y` trace and returns what breaks the durable replace of a store
    file (PrivateFile.replace), with the number of replaces seen: in each thread, a temporary
    file is written whole and fsync'ed before it is renamed over the store file, and the
    directory is fsync'ed after the rename, before that thread touches the store again. A
    write to a store file itself is a write in place."""
    problems, renames = [], 0
    unsynced: dict[str, str] = {}  # temporary file -> thread that wrote it after its last fsync
    undurable: dict[str, str] = {}  # thread -> store file renamed and not yet made durable
    for line in trace.splitlines():
        m = _TRACE_LINE.match(line)
        if not m or m.group(2) or directory not in line:
            continue  # resumed lines: the call started (and was ordered) on its first line
        thread, call, rest = m.group(1), m.group(3), m.group(4)
        fd_path = _FD_PATH.match(rest)
        path = fd_path.group(1) if fd_path else None
        if call in ("fsync", "fdatasync") and path == directory:
            undurable.pop(thread, None)
            continue
        if thread in undurable and call in ("write", "rename", "renameat", "renameat2"):
            problems.append(f"{undurable.pop(thread)} was renamed into place, and the directory not fsync'ed before: {line}")
        if call == "write" and path and path.startswith(directory + "/"):
            if is_temporary(path):
                unsynced[path] = thread
            elif is_store_file(path):
                problems.append(f"a store file written in place: {line}")
        elif call in ("fsync", "fdatasync") and path:
            unsynced.pop(path, None)
        elif call.startswith("rename"):
            source, target = re.findall(r'"([^"]*)"', rest)[:2]
            if not is_store_file(target):
                continue
            renames += 1
            if source in unsynced:
                problems.append(f"renamed before its data was fsync'ed: {line}")
            undurable[thread] = target
    problems += [f"{target} was renamed into place and the directory never fsync'ed" for target in undurable.values()]
    return problems, renames


def is_temporary(path: str) -> bool:
    """`.<identity>.json.tmp-<random>`: a write under way (or cut by a crash)."""
    return ".tmp-" in path.rsplit("/", 1)[-1]


def is_store_file(path: str) -> bool:
    """`<identity>.json`."""
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".json") and not name.startswith(".")


def test_a_store_write_reaches_the_disk_before_it_replaces_the_file(latchkey, make_idp, tmp_path):
    """A SIGKILL leaves the page cache alone, so the kills above cannot tell a durable write
    from one a power cut would lose. strace on the running server shows the order instead,
    for every write while refreshes go on: write the temporary file, fsync it, rename it over
    the store file, fsync the directory."""
    lane = Lane("traced", latchkey, make_idp, KEY)
    lane.start()
    trace_path, attached = tmp_path / "strace.txt", tmp_path / "strace.stderr"
    with open(attached, "w") as err:
        tracer = subprocess.Popen(["strace", "-f", "-y", "-s", "0", "-e", "signal=none", "-e", f"trace={TRACED_CALLS}",
                                   "-o", str(trace_path), "-p", str(lane.proxy.proc.pid)],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    try:
        assert wait_until(lambda: "attached" in attached.read_text(), 10), f"strace did not attach: {attached.read_text()}"
        for round_ in range(5):
            for idp in lane.idps.values():
                idp.expire_access_tokens()
            for identity in IDENTITIES:
                assert lane.proxy.get(f"/{identity}/traced/{round_}").status == 200
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(10)
    problems, renames = durability_violations(trace_path.read_text(), str(lane.directory))
    assert not problems, "\n".join(problems[:5])
    assert renames >= 10, f"only {renames} store writes were traced"
