"""`latchkey exec -- COMMAND` through the real binary, with real clients as the child: curl,
Python's urllib and requests, git and Node call https://api.test/… (a name that does not
resolve, so only the proxy reaches the upstream) with nothing but the variables exec sets,
and the upstream sees the route's credential; the child's environment (proxy and trust
variables, parents' copies replaced, no credential anywhere, LATCHKEY_URL only for a route
without host:), --print-env, exit statuses, signals passed on, the port closed after the
child, requests in flight finished, the quick-start flags, and tunnel hosts."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest

from exec_support import (BUNDLE_VARIABLES, EXEC_VARIABLES, LATCHKEY_URL, NO_PROXY, NO_PROXY_VARIABLES, PROXY_URL,
                          PROXY_VARIABLES, ca_path, is_exec_bundle, parse_env, run_exec, start_exec, start_exec_on_terminal,
                          wait_while_running)
from forward_support import HOST, PROXY_SECRET, ApiServer, forward_config
from git_support import BRANCH, GIT_ENV, GitServer, run_git
from support import TOKEN, TOKEN2, config, free_port, wait_until
from tls_support import Certs
from tunnel_support import AFTER_EOF, EchoServer, machine_address

CLIENTS = Path(__file__).resolve().parent / "clients"


@pytest.fixture
def api(tmp_path):
    server = ApiServer(Certs(tmp_path / "pki"))
    yield server
    server.close()


def python(code: str, *args) -> list:
    """A child that runs Python code with this venv's interpreter (which has requests)."""
    return [sys.executable, "-c", textwrap.dedent(code), *[str(a) for a in args]]


def echoed_header(stub_answer: dict, name: str):
    """A header from the stub upstream's echo (an ordered [name, value] list)."""
    return next((v for k, v in stub_answer["headers"] if k.lower() == name.lower()), None)


# ----- real clients as the child ------------------------------------------------------------------

def test_curl_in_the_child_gets_the_routes_credential(latchkey, api):
    done = run_exec(latchkey, ["curl", "-sS", f"https://{HOST}/repos/x?page=2"], cfg=forward_config(api), flags=["--access-log"])
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)  # stdout is the child's alone: exec logs to stderr
    assert seen["path"] == "/repos/x?page=2"
    assert seen["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert not any(name.lower() == "proxy-authorization" for name in seen["headers"])


def test_python_urllib_in_the_child(latchkey, api):
    child = python(f"""
        import urllib.request
        with urllib.request.urlopen("https://{HOST}/urllib", timeout=20) as answer:
            print(answer.read().decode())
    """)
    done = run_exec(latchkey, child, cfg=forward_config(api))
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["path"] == "/urllib" and seen["headers"]["Authorization"] == f"Bearer {TOKEN}"


def test_python_requests_in_the_child(latchkey, api):
    child = python(f"""
        import requests
        answer = requests.post("https://{HOST}/requests", json={{"n": 1}}, timeout=20)
        print(answer.status_code)
        print(answer.text)
    """)
    done = run_exec(latchkey, child, cfg=forward_config(api))
    assert done.returncode == 0, done.stderr
    status, _, text = done.stdout.partition("\n")
    assert status == "200", done.stdout
    seen = json.loads(text)
    assert seen["method"] == "POST" and json.loads(seen["body"]) == {"n": 1}
    assert seen["headers"]["Authorization"] == f"Bearer {TOKEN}"


@pytest.fixture
def git_server(tmp_path):
    server = GitServer(Certs(tmp_path / "git-pki"), tmp_path / "git")
    yield server
    server.close()


def test_the_git_server_wants_the_bearer_token(git_server):
    """The fixture alone, without Latchkey: the refs with the token, 401 without."""
    url = f"{git_server.url}/repo.git"
    trust = {"GIT_SSL_CAINFO": str(git_server.ca.cert)}
    done = run_git("-c", f"http.extraHeader=Authorization: Bearer {TOKEN}", "ls-remote", url, env=trust)
    assert done.returncode == 0, done.stderr
    assert f"{git_server.head}\trefs/heads/{BRANCH}" in done.stdout
    refused = run_git("ls-remote", url, env=trust)
    assert refused.returncode != 0
    assert git_server.seen[-1]["authorization"] is None


def test_git_ls_remote_in_the_child(latchkey, api, git_server):
    route = {"name": "git", "host": HOST, "path": "/", "upstream": {"url": git_server.url, "ca_file": str(git_server.ca.cert)},
             "inject": [{"header": "Authorization", "value": "Bearer {token}", "credential": "api"}]}
    done = run_exec(latchkey, ["git", "ls-remote", f"https://{HOST}/repo.git"], cfg=forward_config(api, routes=[route]),
                    env=GIT_ENV)
    assert done.returncode == 0, done.stderr
    assert f"{git_server.head}\tHEAD" in done.stdout
    assert f"{git_server.head}\trefs/heads/{BRANCH}" in done.stdout
    assert git_server.seen and all(s["authorization"] == f"Bearer {TOKEN}" for s in git_server.seen)


def test_node_https_in_the_child(latchkey, api):
    done = run_exec(latchkey, ["node", CLIENTS / "https_via_proxy.js", f"https://{HOST}/node?x=1", "POST", '{"from": "node"}'],
                    cfg=forward_config(api))
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["path"] == "/node?x=1" and json.loads(seen["body"]) == {"from": "node"}
    assert seen["headers"]["Authorization"] == f"Bearer {TOKEN}"


# ----- what the child is given ----------------------------------------------------------------------

ENV_TOKEN = "lk-itest-env-token-3d91c7"  # a credential the configuration reads from the environment
ENV_TOKEN_VARIABLE = "LK_ITEST_API_TOKEN"


def three_credential_config(api, tmp_path) -> dict:
    """Three routes: a credential given in the file, one from a file, one from the variable
    ENV_TOKEN_VARIABLE (run exec with env=ENV_TOKEN_ENV). None may reach the child."""
    token_file = tmp_path / "other-token"
    token_file.write_text(TOKEN2 + "\n")
    token_file.chmod(0o600)
    cfg = forward_config(api)
    for name, host, source in (("file", "file.test", {"file": str(token_file)}), ("env", "env.test", {"env": ENV_TOKEN_VARIABLE})):
        cfg["routes"].append({"name": name, "host": host, "path": "/", "upstream": {"url": api.url, "ca_file": str(api.ca.cert)},
                              "inject": [{"header": "X-Api-Key", "value": "{token}", "credential": name}]})
        cfg["credentials"][name] = source
    return cfg


ENV_TOKEN_ENV = {ENV_TOKEN_VARIABLE: ENV_TOKEN}


def test_the_childs_environment_has_the_proxy_and_trust_variables_and_no_credential(latchkey, api, tmp_path):
    done = run_exec(latchkey, ["env"], cfg=three_credential_config(api, tmp_path), env=ENV_TOKEN_ENV)
    assert done.returncode == 0, done.stderr
    env = parse_env(done.stdout)
    proxy = env.get("HTTPS_PROXY", "")
    assert PROXY_URL.match(proxy), proxy
    assert PROXY_URL.match(proxy).group("secret") != PROXY_SECRET  # exec's own, not the config listener's
    for name in PROXY_VARIABLES:
        assert env.get(name) == proxy, name
    for name in NO_PROXY_VARIABLES:
        assert env.get(name) == NO_PROXY, name
    assert is_exec_bundle(latchkey, env["SSL_CERT_FILE"]), env["SSL_CERT_FILE"]
    for name in BUNDLE_VARIABLES:
        assert env.get(name) == env["SSL_CERT_FILE"], name
    assert env.get("NODE_EXTRA_CA_CERTS") == str(ca_path(latchkey))
    assert env.get("NODE_USE_ENV_PROXY") == "1"
    assert "LATCHKEY_URL" not in env  # every route has a host: no base-URL client can use one
    assert ENV_TOKEN_VARIABLE not in env  # the variable a credential is read from is withheld
    for secret in (TOKEN, TOKEN2, ENV_TOKEN):
        assert secret not in done.stdout and secret not in done.stderr

    bundle, ca = Path(env["SSL_CERT_FILE"]).read_text(), ca_path(latchkey).read_text()
    assert ca.strip() in bundle
    assert bundle.count("BEGIN CERTIFICATE") > ca.count("BEGIN CERTIFICATE")  # the system's roots too

    again = parse_env(run_exec(latchkey, ["env"], cfg=forward_config(api)).stdout)
    assert PROXY_URL.match(again["HTTPS_PROXY"]).group("secret") != PROXY_URL.match(proxy).group("secret")


def test_the_parents_variables_are_replaced_not_duplicated(latchkey, api):
    inherited = "inherited-7f3a"
    parent = {name: f"/{inherited}/{name}" for name in EXEC_VARIABLES}
    parent.update({name: f"http://{inherited}.invalid:3128" for name in PROXY_VARIABLES})
    done = run_exec(latchkey, ["env"], cfg=forward_config(api), env=parent)
    assert done.returncode == 0, done.stderr
    env = parse_env(done.stdout)  # asserts that no name comes twice
    assert inherited not in done.stdout, done.stdout
    assert is_exec_bundle(latchkey, env["SSL_CERT_FILE"]), env["SSL_CERT_FILE"]
    assert PROXY_URL.match(env["https_proxy"])


def test_the_parents_roots_stay_trusted_while_another_run_starts(latchkey, api, tmp_path):
    """A parent's SSL_CERT_FILE (a company's roots, say) is what the bundle adds Latchkey's
    CA to; a second exec started meanwhile with other roots must not change what the first
    one's child trusts."""
    company = Certs(tmp_path / "company").ca("company-root")
    out = tmp_path / "trusted.pem"
    child = python("""
        import os, sys, time
        open(sys.argv[1] + ".ready", "w").close()
        while not os.path.exists(sys.argv[1] + ".go"):  # meanwhile, another exec runs
            time.sleep(0.05)
        with open(os.environ["SSL_CERT_FILE"]) as bundle, open(sys.argv[1], "w") as out:
            out.write(bundle.read())
    """, out)
    p = start_exec(latchkey, child, cfg=forward_config(api), env={"SSL_CERT_FILE": str(company.cert)})
    wait_while_running(p, Path(f"{out}.ready").exists)
    other = run_exec(latchkey, ["true"], cfg=forward_config(api))  # with the system's roots
    assert other.returncode == 0, other.stderr
    Path(f"{out}.go").touch()
    assert p.wait_exit(30) == 0, p.log_tail()
    trusted = out.read_text()
    keeps_company_root = company.cert.read_text().strip() in trusted
    keeps_latchkey_ca = ca_path(latchkey).read_text().strip() in trusted
    assert keeps_company_root, "the company's root vanished from the bundle the first child trusts"
    assert keeps_latchkey_ca, "Latchkey's CA is not in the bundle the first child trusts"


def test_the_bundle_holds_latchkeys_ca_once_when_ssl_cert_file_names_it(latchkey, api):
    """A nested exec, or a shell that kept --print-env's variables, gives exec the bundle
    itself as the parent's SSL_CERT_FILE: Latchkey's CA must not be added again each time."""
    bundle = parse_env(run_exec(latchkey, ["env"], cfg=forward_config(api)).stdout)["SSL_CERT_FILE"]
    ca = ca_path(latchkey).read_text().strip()
    for _ in range(3):
        done = run_exec(latchkey, ["env"], cfg=forward_config(api), env={"SSL_CERT_FILE": bundle})
        assert done.returncode == 0, done.stderr
        bundle = parse_env(done.stdout)["SSL_CERT_FILE"]
        copies = Path(bundle).read_text().count(ca)
        assert copies == 1, f"Latchkey's CA is {copies} times in the bundle"


def test_the_child_inherits_no_descriptor_of_latchkeys(latchkey, api, tmp_path):
    """Neither the listening sockets nor the store's or the credentials' files: a child that
    may not see a token may not read it from a descriptor either."""
    child = python("""
        import os
        for fd in range(3, 4096):
            try:
                print(fd, os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:
                pass
    """)
    done = run_exec(latchkey, child, cfg=three_credential_config(api, tmp_path), env=ENV_TOKEN_ENV)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", f"descriptors the child inherited:\n{done.stdout}"


def test_print_env_masks_the_secret_and_runs_nothing(latchkey, api, tmp_path):
    marker = tmp_path / "ran"
    done = run_exec(latchkey, ["touch", marker], cfg=forward_config(api), flags=["--print-env"])
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    env = parse_env(done.stdout)
    assert len(env) == len(lines), f"not one NAME=value a line:\n{done.stdout}"
    for name in PROXY_VARIABLES:
        assert env.get(name, "").startswith("http://latchkey:****@127.0.0.1:"), f"{name}={env.get(name)}"
    assert is_exec_bundle(latchkey, env["SSL_CERT_FILE"]), env["SSL_CERT_FILE"]
    for name in BUNDLE_VARIABLES:
        assert env.get(name) == env["SSL_CERT_FILE"], name
    assert env.get("NODE_EXTRA_CA_CERTS") == str(ca_path(latchkey))
    assert TOKEN not in done.stdout + done.stderr


def test_a_route_without_host_gives_the_child_latchkey_url(latchkey, upstream):
    child = python("""
        import os, urllib.request
        print(os.environ["LATCHKEY_URL"])
        with urllib.request.urlopen(os.environ["LATCHKEY_URL"] + "/base/url", timeout=20) as answer:
            print(answer.read().decode())
    """)
    done = run_exec(latchkey, child, cfg=config(upstream.url))
    assert done.returncode == 0, done.stderr
    url, _, text = done.stdout.partition("\n")
    assert LATCHKEY_URL.match(url), url
    seen = json.loads(text)
    assert seen["path"] == "/base/url" and echoed_header(seen, "Authorization") == f"Bearer {TOKEN}"


def test_the_configurations_own_listeners_are_not_bound(latchkey, api):
    port = free_port()
    cfg = forward_config(api, listener={"listen": f"127.0.0.1:{port}"})
    child = python(f"""
        import socket
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
            print("bound")
        except ConnectionRefusedError:
            print("refused")
    """)
    done = run_exec(latchkey, child, cfg=cfg)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "refused"


# ----- the child's end is exec's ----------------------------------------------------------------------

@pytest.mark.parametrize("command, status", [
    (["true"], 0),
    (["sh", "-c", "exit 3"], 3),
    (["sh", "-c", "kill -TERM $$"], 128 + signal.SIGTERM),
    (["sh", "-c", "kill -KILL $$"], 128 + signal.SIGKILL),
], ids=["zero", "exit-3", "sigterm", "sigkill"])
def test_exec_exits_with_the_childs_status(latchkey, api, command, status):
    done = run_exec(latchkey, command, cfg=forward_config(api))
    assert done.returncode == status, done.stderr


TRAPPING_CHILD = """
    import os, signal, sys, time
    out = sys.argv[1]
    def got(signum, frame):
        with open(out, "w") as f:
            f.write(signal.Signals(signum).name)
        os._exit(40 + signum)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, got)
    open(out + ".ready", "w").close()
    while True:
        time.sleep(0.05)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_signals_sent_to_exec_reach_the_child(latchkey, api, tmp_path, sig):
    out = tmp_path / "signal"
    p = start_exec(latchkey, python(TRAPPING_CHILD, out), cfg=forward_config(api))
    wait_while_running(p, Path(f"{out}.ready").exists)
    p.send_signal(sig)
    assert p.wait_exit(20) == 40 + sig, p.log_tail()
    assert out.read_text() == sig.name


def test_ctrl_c_at_a_terminal_reaches_the_child_once(latchkey, api, tmp_path):
    """The terminal sends SIGINT to the whole foreground process group, the child included:
    exec must not pass on a second one (which many programs take for "stop now")."""
    out = tmp_path / "count"
    child = python("""
        import signal, sys, time
        got = []
        signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
        open(sys.argv[1] + ".ready", "w").close()
        while not got:
            time.sleep(0.01)
        time.sleep(1.0)  # time for a second one to come
        open(sys.argv[1], "w").write(str(len(got)))
        sys.exit(40 + len(got))
    """, out)
    proc, terminal = start_exec_on_terminal(latchkey, child, cfg=forward_config(api))
    try:
        assert wait_until(lambda: Path(f"{out}.ready").exists() or proc.poll() is not None, timeout=30)
        assert proc.poll() is None, f"latchkey exec exited with {proc.returncode}"
        os.write(terminal, b"\x03")  # Ctrl-C
        assert proc.wait(timeout=20) == 41, f"the child counted {out.read_text() if out.exists() else 'no'} SIGINT"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        os.close(terminal)


def test_the_child_reads_execs_stdin(latchkey, api):
    done = run_exec(latchkey, ["cat"], cfg=forward_config(api), input="line one\nline two\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "line one\nline two\n"


def test_the_proxy_wants_this_runs_secret(latchkey, api):
    """Another process on the machine cannot use exec's proxy: no password, or the
    configuration listener's, is refused with 407."""
    child = python(f"""
        import base64, os, socket, urllib.parse
        proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
        for password in (None, "{PROXY_SECRET}", proxy.password):
            sock = socket.create_connection((proxy.hostname, proxy.port), timeout=20)
            field = f"Proxy-Authorization: Basic {{base64.b64encode(f'latchkey:{{password}}'.encode()).decode()}}\\r\\n" if password else ""
            sock.sendall(f"CONNECT {HOST}:443 HTTP/1.1\\r\\nHost: {HOST}:443\\r\\n{{field}}\\r\\n".encode())
            print(sock.recv(4096).split(b"\\r\\n")[0].decode())
            sock.close()
    """)
    done = run_exec(latchkey, child, cfg=forward_config(api))
    assert done.returncode == 0, done.stderr
    assert [line.split()[1] for line in done.stdout.splitlines()] == ["407", "407", "200"], done.stdout


def test_the_child_starts_with_no_signal_blocked_and_the_usual_ones_at_their_defaults(latchkey, api):
    """Latchkey blocks signals for its signalfd and ignores SIGPIPE; a child inheriting
    either would not die of Ctrl-C or of a closed pipe (`yes | head -1` would complain)."""
    done = run_exec(latchkey, ["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"], cfg=forward_config(api))
    assert done.returncode == 0, done.stderr
    masks = {line.split(":")[0]: int(line.split()[1], 16) for line in done.stdout.splitlines()}
    assert masks["SigBlk"] == 0, done.stdout
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGPIPE, signal.SIGTERM, signal.SIGCHLD):
        assert not masks["SigIgn"] & (1 << (sig - 1)), f"{sig.name} is ignored in the child: {done.stdout}"
    piped = run_exec(latchkey, ["sh", "-c", "yes | head -1"], cfg=forward_config(api))
    assert (piped.returncode, piped.stdout, piped.stderr) == (0, "y\n", "")


def test_the_port_is_closed_once_the_child_has_exited(latchkey, api):
    child = ["sh", "-c", f'curl -sS -o /dev/null -w "%{{http_code}}\\n" https://{HOST}/x; echo "$HTTPS_PROXY"']
    done = run_exec(latchkey, child, cfg=forward_config(api))
    assert done.returncode == 0, done.stderr
    status, proxy = done.stdout.split()
    assert status == "200"
    port = int(PROXY_URL.match(proxy).group("port"))
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def slow_route_config(upstream) -> dict:
    """api.test served by the plain stub upstream (whose /slow answers late)."""
    route = {"name": "api", "host": HOST, "path": "/", "upstream": upstream.url,
             "inject": [{"header": "Authorization", "value": "Bearer {token}", "credential": "api"}]}
    return {"listeners": [{"name": "fwd", "mode": "forward", "inbound": {"proxy_auth": {"value": PROXY_SECRET}}}],
            "credentials": {"api": {"value": TOKEN}}, "routes": [route]}


def test_a_child_that_waits_out_sigterm_still_gets_its_slow_answer(latchkey, upstream, tmp_path):
    """SIGTERM goes to the child, which keeps waiting for its request: exec goes on serving
    it until the child exits."""
    out = tmp_path / "answer.json"
    child = python(f"""
        import json, signal, sys, requests
        got = []
        signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
        answer = requests.get("https://{HOST}/slow?delay=2", timeout=30)
        with open(sys.argv[1], "w") as f:
            json.dump({{"status": answer.status_code, "signals": got, "body": answer.json()}}, f)
    """, out)
    p = start_exec(latchkey, child, cfg=slow_route_config(upstream))
    wait_while_running(p, lambda: upstream.find_requests("/slow"), what="the slow request to reach the upstream")
    p.send_signal(signal.SIGTERM)
    assert p.wait_exit(30) == 0, p.log_tail()
    result = json.loads(out.read_text())
    assert result["signals"] == [signal.SIGTERM]
    assert result["status"] == 200 and echoed_header(result["body"], "Authorization") == f"Bearer {TOKEN}"


def test_a_request_in_flight_when_the_child_exits_is_finished(latchkey, upstream, tmp_path):
    """The child leaves a request running in the background and exits; Latchkey answers it
    before it stops."""
    answer, go = tmp_path / "answer.json", tmp_path / "go"
    child = ["sh", "-c", f'curl -sS "https://{HOST}/slow?delay=2" > {answer} 2>&1 & '
                         f'while [ ! -e {go} ]; do sleep 0.05; done; echo "$HTTPS_PROXY"']
    p = start_exec(latchkey, child, cfg=slow_route_config(upstream))
    wait_while_running(p, lambda: upstream.find_requests("/slow"), what="the slow request to reach the upstream")
    started = time.monotonic()
    go.touch()  # the child exits now, its request still waiting for the upstream
    assert p.wait_exit(30) == 0, p.log_tail()
    assert time.monotonic() - started > 1.0, "exec did not wait for the request in flight"
    body = wait_until(lambda: answer.read_text().strip().endswith("}") and answer.read_text(), timeout=10)
    assert body, f"the background request got no answer: {answer.read_text()!r}\n{p.log_tail()}"
    assert echoed_header(json.loads(body), "Authorization") == f"Bearer {TOKEN}"
    port = int(PROXY_URL.match(p.stdout_path.read_text().split()[-1]).group("port"))
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


# ----- quick start and tunnels ---------------------------------------------------------------------

def quick_flags(upstream, tmp_path) -> list:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    return ["--host", HOST, "--upstream", upstream.url, "--bearer-token-file", str(token_file)]


def test_quick_start_flags_make_a_route_for_the_host(latchkey, upstream, tmp_path):
    flags = quick_flags(upstream, tmp_path)
    done = run_exec(latchkey, ["curl", "-sS", f"https://{HOST}/quick?q=1"], flags=flags)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["target"] == "/quick?q=1" and echoed_header(seen, "Authorization") == f"Bearer {TOKEN}"
    env = run_exec(latchkey, ["env"], flags=flags)
    assert env.returncode == 0, env.stderr
    assert PROXY_URL.match(parse_env(env.stdout).get("HTTPS_PROXY", "")), env.stdout
    assert TOKEN not in env.stdout + env.stderr


CONNECT_CHILD = """
    import base64, os, socket, sys, urllib.parse
    proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
    auth = base64.b64encode(f"{proxy.username}:{proxy.password}".encode()).decode()
    sock = socket.create_connection((proxy.hostname, proxy.port), timeout=20)
    sock.sendall(f"CONNECT {sys.argv[1]} HTTP/1.1\\r\\nHost: {sys.argv[1]}\\r\\nProxy-Authorization: Basic {auth}\\r\\n\\r\\n".encode())
    head = b""
    while b"\\r\\n\\r\\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            break
        head += chunk
    print(head.split(b"\\r\\n")[0].decode())
    sock.sendall(b"bytes through exec")
    sock.shutdown(socket.SHUT_WR)
    back = b""
    while chunk := sock.recv(65536):
        back += chunk
    print(back.decode())
"""


@pytest.mark.parametrize("given_by", ["config", "flag"])
def test_tunnel_hosts_reach_exec_s_listener(latchkey, api, upstream, tmp_path, given_by):
    address = machine_address()
    echo = EchoServer(address)
    try:
        if given_by == "config":
            done = run_exec(latchkey, python(CONNECT_CHILD, echo.authority), cfg=forward_config(api, listener={"tunnel": [address]}))
        else:
            done = run_exec(latchkey, python(CONNECT_CHILD, echo.authority), flags=quick_flags(upstream, tmp_path) + ["--tunnel", address])
    finally:
        echo.close()
    assert done.returncode == 0, done.stderr
    status, _, back = done.stdout.partition("\n")
    assert status.startswith("HTTP/1.1 200"), done.stdout
    assert back.rstrip("\n") == "bytes through exec" + AFTER_EOF.decode()
    assert bytes(echo.received[0]) == b"bytes through exec"


def test_a_command_that_cannot_run_exits_127_or_126_as_env_does(latchkey, api, tmp_path):
    missing = run_exec(latchkey, [str(tmp_path / "no-such-program")], cfg=forward_config(api))
    assert missing.returncode == 127, missing.stderr
    assert "cannot run" in missing.stderr and "no-such-program" in missing.stderr
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o644)
    refused = run_exec(latchkey, [str(script)], cfg=forward_config(api))
    assert refused.returncode == 126, refused.stderr
    assert "ran" not in refused.stdout
