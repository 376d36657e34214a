"""A mitmproxy addon for the forward scenario (bench_forward.py): what a user of mitmproxy
writes to attach a credential to every request that passes through it.

    mitmdump -s Benchmarks/mitm_inject.py --set inject_token_file=FILE [--set inject_upstream=http://127.0.0.1:PORT]

Every request gets `Authorization: Bearer <the file's token>` (read once, at start).
`inject_upstream`, when set, sends every request there instead of to the host the client
named: the benchmark's clients ask for https://api.test/, a name that resolves nowhere,
as they do with Latchkey, whose route sends it to the same upstream."""

from urllib.parse import urlsplit

from mitmproxy import ctx, http


class InjectBearer:
    def __init__(self):
        self.header = None
        self.upstream = None

    def load(self, loader):
        loader.add_option("inject_token_file", str, "", "file holding the bearer token to attach")
        loader.add_option("inject_upstream", str, "", "scheme://host:port every request goes to instead")

    def configure(self, updated):
        if "inject_token_file" in updated and ctx.options.inject_token_file:
            with open(ctx.options.inject_token_file) as f:
                self.header = "Bearer " + f.read().strip()
        if "inject_upstream" in updated and ctx.options.inject_upstream:
            u = urlsplit(ctx.options.inject_upstream)
            self.upstream = (u.scheme, u.hostname, u.port or (443 if u.scheme == "https" else 80))

    def http_connect(self, flow: http.HTTPFlow) -> None:
        # Where the tunnel leads, instead of the host the client named: mitmproxy would
        # otherwise look that name up (getaddrinfo) for every tunnel, lazy connection
        # strategy or not, and api.test is in no DNS.
        if self.upstream:
            flow.request.host, flow.request.port = self.upstream[1], self.upstream[2]

    def request(self, flow: http.HTTPFlow) -> None:
        if self.upstream:
            flow.request.scheme, flow.request.host, flow.request.port = self.upstream
        if self.header:
            flow.request.headers["Authorization"] = self.header


addons = [InjectBearer()]
