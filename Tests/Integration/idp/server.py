"""Runs the test IdP: django-oauth-toolkit behind waitress on a loopback port.

    python -m idp.server [--port 0] [--access-token-seconds 3] [--db FILE] [--template FILE]

(with Tests/Integration on PYTHONPATH). Once it accepts connections it prints
`idp listening address=HOST:PORT` on stdout. The database is a fresh sqlite file (in a
temporary directory unless --db says where), migrated and seeded with accounts.py. Migrating
takes about two seconds, so --template names a file that keeps a migrated, seeded database:
the first start writes it, later starts copy it. SIGTERM and SIGINT stop it with status 0.
"""

import argparse
import os
import shutil
import signal
import socket
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m idp.server")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--access-token-seconds", type=int,
                   default=int(os.environ.get("IDP_ACCESS_TOKEN_SECONDS", "3")),
                   help="lifetime of issued access tokens (default: $IDP_ACCESS_TOKEN_SECONDS or 3)")
    p.add_argument("--db", type=Path, help="sqlite file to create (default: in a temporary directory)")
    p.add_argument("--template", type=Path, help="migrated database to copy, written if missing")
    p.add_argument("--threads", type=int, default=16)
    return p.parse_args(argv)


def copy_db(source: Path, target: Path) -> None:
    """sqlite's backup API: a consistent copy even of a WAL-mode database with open handles."""
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


def prepare_db(db: Path, template: Path | None) -> None:
    from django.core.management import call_command
    from django.db import connection

    from idp.seed import seed

    if template is not None and template.exists():
        copy_db(template, db)
        return
    call_command("migrate", verbosity=0, interactive=False)
    seed()
    connection.close()
    if template is not None:
        # Written aside and renamed, so that a concurrent start never copies half a file.
        partial = template.with_name(f"{template.name}.{os.getpid()}.partial")
        copy_db(db, partial)
        os.replace(partial, template)


def serve(args, db: Path) -> None:
    listener = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((args.host, args.port))
    host, port = listener.getsockname()[:2]
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    # Settings read these; the device flow's verification_uri needs the bound port.
    os.environ["IDP_DB"] = str(db)
    os.environ["IDP_BASE_URL"] = f"http://{authority}"
    os.environ["IDP_ACCESS_TOKEN_SECONDS"] = str(args.access_token_seconds)
    os.environ["DJANGO_SETTINGS_MODULE"] = "idp.settings"

    from django.core.wsgi import get_wsgi_application
    from waitress import create_server

    application = get_wsgi_application()
    prepare_db(db, args.template)
    # connection_limit and backlog above the 200 concurrent requests of the storm tests;
    # poll() instead of select() so that descriptors past 1024 work.
    server = create_server(application, sockets=[listener], threads=args.threads, connection_limit=1000,
                           backlog=1024, asyncore_use_poll=True, ident="latchkey-idp")
    from idp import control

    control.dispatcher = server.task_dispatcher
    print(f"idp listening address={authority}", flush=True)
    server.run()


def main(argv=None) -> None:
    args = parse_args(argv)
    scratch = None if args.db is not None else tempfile.mkdtemp(prefix="latchkey-idp-")

    def stop(*_):
        # Exit at once: nothing here needs flushing, and a SystemExit raised into whatever
        # the main thread runs (a finalizer, waitress's loop) may be swallowed.
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        os._exit(0)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
    serve(args, args.db if scratch is None else Path(scratch) / "idp.sqlite3")


if __name__ == "__main__":
    main()
