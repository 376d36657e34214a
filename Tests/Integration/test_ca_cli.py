"""`latchkey ca path|bundle|rotate` through the real binary, checked with the `openssl` CLI,
and `check` naming the TLS files that are expired, mismatched, readable by others or cut
short (each made with `openssl` in the test's directory)."""

import stat
import subprocess
from pathlib import Path


OPENSSL_CA_CONFIG = """\
[ca]
default_ca = test
[test]
database = index.txt
new_certs_dir = .
serial = serial
default_md = sha256
policy = names
unique_subject = no
[names]
commonName = supplied
"""


def openssl(*args: str, cwd: Path) -> str:
    result = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def self_signed(directory: Path, name: str, days: int = 30, ca: bool = False) -> tuple[Path, Path]:
    """A P-256 certificate and its key (0600) made by `openssl req -x509`."""
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    extra = ["-addext", "basicConstraints=critical,CA:TRUE"] if ca else []
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key),
            "-out", str(cert), "-days", str(days), "-subj", f"/CN={name}", *extra, cwd=directory)
    key.chmod(0o600)
    return cert, key


def expired(directory: Path) -> tuple[Path, Path]:
    """A certificate that ended in 2020 (`openssl ca -selfsign` sets both dates)."""
    (directory / "ca.cnf").write_text(OPENSSL_CA_CONFIG)
    (directory / "index.txt").write_text("")
    (directory / "serial").write_text("01\n")
    key, csr, cert = directory / "old.key", directory / "old.csr", directory / "old.pem"
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key),
            "-out", str(csr), "-subj", "/CN=old.test", cwd=directory)
    openssl("ca", "-batch", "-config", "ca.cnf", "-selfsign", "-keyfile", str(key), "-in", str(csr), "-out", str(cert),
            "-startdate", "20200101000000Z", "-enddate", "20200201000000Z", cwd=directory)
    key.chmod(0o600)
    return cert, key


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_ca_path_makes_the_ca_once_and_openssl_verifies_it(latchkey, tmp_path):
    first = latchkey.run(["ca", "path"])
    assert first.returncode == 0, first.stderr
    path = Path(first.stdout.strip())
    assert path == tmp_path / "state" / "latchkey" / "ca" / "ca.pem"
    assert mode(path) == 0o644 and mode(path.parent / "ca.key") == 0o600 and mode(path.parent) == 0o700
    assert "OK" in openssl("verify", "-CAfile", str(path), str(path), cwd=tmp_path)
    text = openssl("x509", "-in", str(path), "-noout", "-subject", "-ext", "basicConstraints,keyUsage", cwd=tmp_path)
    assert "CN = Latchkey local CA (" in text and "O = Latchkey" in text
    assert "CA:TRUE, pathlen:0" in text and "Certificate Sign, CRL Sign" in text
    again = latchkey.run(["ca", "path"])
    assert again.stdout == first.stdout
    assert path.read_bytes() == Path(first.stdout.strip()).read_bytes()


def test_the_ca_key_is_sealed_with_the_store_key(latchkey, tmp_path):
    env = {"LATCHKEY_STORE_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}
    path = Path(latchkey.run(["ca", "path"], env=env).stdout.strip())
    key = (path.parent / "ca.key").read_text()
    assert '"format":"latchkey-ca-key-v1"' in key and "PRIVATE KEY" not in key
    assert latchkey.run(["ca", "path"], env=env).returncode == 0
    without = latchkey.run(["ca", "path"])
    assert without.returncode == 1
    assert "is encrypted, but no store key is configured" in without.stderr


def test_ca_bundle_holds_the_system_roots_then_the_ca(latchkey, tmp_path):
    root, _ = self_signed(tmp_path, "Some Root", ca=True)
    result = latchkey.run(["ca", "bundle"], env={"SSL_CERT_FILE": str(root)})
    assert result.returncode == 0, result.stderr
    bundle = Path(result.stdout.strip())
    assert bundle.name == "bundle.pem" and mode(bundle) == 0o644
    ca = Path(latchkey.run(["ca", "path"]).stdout.strip())
    assert bundle.read_text() == root.read_text() + ca.read_text()
    system = latchkey.run(["ca", "bundle"], env={"SSL_CERT_FILE": ""})
    assert system.returncode == 0, system.stderr
    assert bundle.read_text().count("BEGIN CERTIFICATE") > 10
    missing = latchkey.run(["ca", "bundle"], env={"SSL_CERT_FILE": str(tmp_path / "none.pem")})
    assert missing.returncode == 1
    assert f"cannot read certificate file {tmp_path / 'none.pem'}" in missing.stderr


def test_ca_rotate_makes_a_new_ca_and_says_to_trust_it(latchkey, tmp_path):
    before = Path(latchkey.run(["ca", "path"]).stdout.strip()).read_text()
    result = latchkey.run(["ca", "rotate"])
    assert result.returncode == 0, result.stderr
    path = Path(result.stdout.strip())
    assert path.read_text() != before
    assert "clients must now trust the new certificate" in result.stderr
    assert "OK" in openssl("verify", "-CAfile", str(path), str(path), cwd=tmp_path)


def test_ca_rotate_refuses_the_configurations_own_ca(latchkey, tmp_path):
    cert, key = self_signed(tmp_path, "My CA", ca=True)
    cfg = latchkey.write_config({"ca": {"cert_file": str(cert), "key_file": str(key)},
                                 "routes": [{"name": "r", "path": "/", "upstream": "http://127.0.0.1:9"}]})
    result = latchkey.run(["ca", "rotate", "--config", str(cfg)])
    assert result.returncode == 1
    assert f"ca.cert_file {cert}, ca.key_file {key}" in result.stderr
    assert "replace those two files" in result.stderr
    path = latchkey.run(["ca", "path", "--config", str(cfg)])
    assert path.returncode == 0 and path.stdout.strip() == str(cert)


def check_tls(latchkey, tmp_path, cert: Path, key: Path, extra: dict | None = None) -> subprocess.CompletedProcess:
    listener = {"name": "lan", "listen": "127.0.0.1:0", "tls": {"cert_file": str(cert), "key_file": str(key)}}
    cfg = latchkey.write_config({"listeners": [listener], **(extra or {}),
                                 "routes": [{"name": "r", "path": "/", "upstream": "http://127.0.0.1:9"}]})
    return latchkey.run(["check", "--config", str(cfg)])


def test_check_accepts_good_files(latchkey, tmp_path):
    cert, key = self_signed(tmp_path, "app.test")
    result = check_tls(latchkey, tmp_path, cert, key)
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr


def test_check_names_an_expired_certificate(latchkey, tmp_path):
    cert, key = expired(tmp_path)
    result = check_tls(latchkey, tmp_path, cert, key)
    assert result.returncode == 1
    assert f"listeners[0].tls.cert_file: certificate file {cert}: the certificate (CN=old.test) expired on 2020-02-01T00:00:00Z" in result.stderr


def test_check_names_a_key_of_another_certificate(latchkey, tmp_path):
    cert, _ = self_signed(tmp_path, "app.test")
    _, other = self_signed(tmp_path, "other.test")
    result = check_tls(latchkey, tmp_path, cert, other)
    assert result.returncode == 1
    assert f"listeners[0].tls.key_file: key file {other} does not belong to the certificate in {cert}" in result.stderr


def test_check_names_a_key_others_can_read(latchkey, tmp_path):
    cert, key = self_signed(tmp_path, "app.test")
    key.chmod(0o644)
    result = check_tls(latchkey, tmp_path, cert, key)
    assert result.returncode == 1
    assert f"listeners[0].tls.key_file: key file {key} is accessible by others (mode 0644); run chmod 600 {key}" in result.stderr


def test_check_names_a_truncated_certificate(latchkey, tmp_path):
    cert, key = self_signed(tmp_path, "app.test")
    cert.write_text(cert.read_text()[:200])
    result = check_tls(latchkey, tmp_path, cert, key)
    assert result.returncode == 1
    assert f"listeners[0].tls.cert_file: certificate file {cert}: a PEM certificate is truncated or corrupted" in result.stderr


def test_check_warns_of_a_certificate_ending_within_seven_days(latchkey, tmp_path):
    cert, key = self_signed(tmp_path, "app.test", days=3)
    result = check_tls(latchkey, tmp_path, cert, key)
    assert result.returncode == 0, result.stderr
    assert "warning: " in result.stderr
    assert f"listeners[0].tls.cert_file: certificate file {cert}: the certificate (CN=app.test) expires on" in result.stderr
