"""The example configurations users run (Configs/, the Compose one, the one inside the
Kubernetes ConfigMap) and what it takes for `latchkey check` to pass them: every secret and
file they name, made real in a temporary directory with a plausible value.

Absolute paths (/run/secrets/..., /var/run/secrets/...) are moved under the temporary
directory by rewriting them in a copy of the config's text, which keeps its lines and
columns; relative ones are taken against the copy, as Latchkey takes them against the
config file."""

from __future__ import annotations

import base64
import datetime
import json
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from support import REPO

# Where example configs live; a new file there is checked without touching the tests.
CONFIG_GLOBS = ("Configs/**/*.yaml", "Docker/compose/*.yaml")

# Keys whose value is a file Latchkey reads (a path, or a list of paths).
FILE_KEYS = {"file", "ca_file", "client_cert", "client_key", "key_file", "previous_key_files",
             "client_key_file", "service_account_file", "subject_token_file"}


def is_manifest(document) -> bool:
    """A Kubernetes object rather than a Latchkey config."""
    return isinstance(document, dict) and "apiVersion" in document and "kind" in document


def configmap_configs(documents) -> dict[str, str]:
    """The Latchkey configs a ConfigMap carries: its `*.yaml` data entries, by key."""
    found = {}
    for document in documents:
        if is_manifest(document) and document["kind"] == "ConfigMap":
            for key, text in (document.get("data") or {}).items():
                if key.endswith(".yaml"):
                    found[f"{document['metadata']['name']}/{key}"] = text
    return found


def example_configs() -> dict[str, str]:
    """Every example config's text by a label: the file's path, or for a Kubernetes
    manifest, the path and the ConfigMap entry."""
    found = {}
    for pattern in CONFIG_GLOBS:
        for path in sorted(REPO.glob(pattern)):
            label = str(path.relative_to(REPO))
            text = path.read_text()
            documents = list(yaml.safe_load_all(text))
            if any(is_manifest(d) for d in documents):
                for entry, config in configmap_configs(documents).items():
                    found[f"{label}:{entry}"] = config
            else:
                found[label] = text
    return found


@dataclass(frozen=True)
class Reference:
    """A file or an environment variable a config names, and where (the key path)."""
    kind: str            # "file" or "env"
    name: str            # the path as written, or the variable's name
    at: tuple            # the keys leading to it, e.g. ("store", "key_file")


def references(node, at: tuple = ()) -> list[Reference]:
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "env" and isinstance(value, str):
                found.append(Reference("env", value, at + (key,)))
            elif key in FILE_KEYS:
                paths = value if isinstance(value, list) else [value]
                found += [Reference("file", p, at + (key,)) for p in paths if isinstance(p, str)]
            else:
                found += references(value, at + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += references(value, at + (index,))
    return found


def plausible(reference: Reference) -> str:
    """A value of the kind Latchkey expects there, never a real secret."""
    key = reference.at[-1]
    if key in ("key_file", "previous_key_files") and (reference.at[0] == "store" or "session" in reference.at):
        return base64.b64encode(secrets.token_bytes(32)).decode() + "\n"   # openssl rand -base64 32
    if key in ("ca_file", "client_cert"):
        return self_signed_certificate()
    if key in ("key_file", "client_key", "client_key_file"):
        return private_key_pem()
    if key == "service_account_file":
        return json.dumps({"type": "service_account", "client_email": "svc@example.iam.gserviceaccount.com",
                           "private_key_id": secrets.token_hex(20), "private_key": private_key_pem(),
                           "token_uri": "https://oauth2.googleapis.com/token"})
    owner = [part for part in reference.at if isinstance(part, str) and part not in ("file", "env")][-1:]
    return f"example-{''.join(owner)}-{secrets.token_hex(8)}\n".replace("_", "-")


def private_key_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def self_signed_certificate() -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Example CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now)
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    return certificate.public_bytes(serialization.Encoding.PEM).decode()


@dataclass
class Materialised:
    """A config copied into `workdir` with every file it names created there."""
    workdir: Path
    config: Path
    env: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)   # path as written -> where it is now

    def path(self, written: str) -> Path:
        """Where a path of the config (or of its deployment) lives under `workdir`."""
        if written.startswith("/"):
            return self.workdir / "root" / written.lstrip("/")
        return self.config.parent / written


def rewrite_paths(text: str, moved: dict[str, str]) -> str:
    """Replaces each whole path of `moved` in `text` in one pass (longest first, so that a
    path that is a prefix of another never takes its place)."""
    if not moved:
        return text
    alternatives = "|".join(re.escape(p) for p in sorted(moved, key=len, reverse=True))
    return re.sub(rf"(?<![\w./-])({alternatives})(?![\w./-])", lambda m: moved[m.group(1)], text)


def materialise(text: str, workdir: Path, name: str = "latchkey.yaml") -> Materialised:
    """Copies the config's text into `workdir`, with every file it names created (mode
    0600, a plausible value) and every variable it names in `env`."""
    config = workdir / "config" / name
    config.parent.mkdir(parents=True, exist_ok=True)
    result = Materialised(workdir, config)
    for reference in references(yaml.safe_load(text)):
        if reference.kind == "env":
            result.env[reference.name] = plausible(reference).strip()
            continue
        target = result.path(reference.name)
        assert target.resolve().is_relative_to(workdir.resolve()), f"{reference.name} leaves the config's directory"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(plausible(reference))
        target.chmod(0o600)
        result.files[reference.name] = target
    moved = {written: str(path) for written, path in result.files.items() if written.startswith("/")}
    config.write_text(rewrite_paths(text, moved))
    return result
