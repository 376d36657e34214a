#!/usr/bin/env bash
# Instructions per new TLS connection, Latchkey against nginx, under valgrind's callgrind:
# the repeatable figure behind the tls scenario's CPU per connection on this shared machine.
#
#   bash Benchmarks/callgrind_tls.sh [LATCHKEY_BINARY]   (default: .build/release/latchkey)
#
# Each server gets the same ECDSA P-256 certificate and answers a tiny response itself
# (Latchkey's /.latchkey/health, nginx's `return 200`), so what is counted is accepting, the
# full handshake (TLS 1.3, X25519; Python's client resumes nothing), one request and the
# close. Each runs twice, after FEW and after MANY connections; the difference divided by
# MANY - FEW takes start-up and shutdown out. Needs valgrind, nginx, openssl and python3.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
binary=${1:-$root/.build/release/latchkey}
FEW=20 MANY=220
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout key.pem -out cert.pem -days 7 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 2>/dev/null
chmod 600 key.pem
# valgrind 3.19 gives up on the DWARF 5 debug information Swift 6.3 writes.
strip -o latchkey "$binary"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
lk_port=$(port) ngx_port=$(port)
cat > latchkey.yaml <<EOF
listeners:
  - { name: main, listen: "127.0.0.1:$lk_port", tls: { cert_file: $work/cert.pem, key_file: $work/key.pem } }
store: { type: memory }
routes: [ { name: r, path: /, upstream: "http://127.0.0.1:9" } ]
server: { loops: 1 }
logging: { level: warning }
EOF
cat > nginx.conf <<EOF
daemon off; master_process off; worker_processes 1; pid $work/nginx.pid; error_log $work/nginx-error.log;
events { worker_connections 1024; }
http { access_log off;
  server { listen 127.0.0.1:$ngx_port ssl; ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;
           ssl_protocols TLSv1.2 TLSv1.3; ssl_session_cache shared:SSL:10m;
           location / { return 200 "ok"; } } }
EOF
cat > connect.py <<'EOF'
import socket, ssl, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
context = ssl.create_default_context(cafile="cert.pem")
for _ in range(count):
    with context.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost") as tls:
        tls.sendall(b"GET /.latchkey/health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % port)
        answer = b""
        while chunk := tls.recv(65536):
            answer += chunk
        assert b" 200 " in answer.split(b"\r\n", 1)[0], answer[:200]
EOF

# total PORT COUNT COMMAND...: the instructions COMMAND ran, serving COUNT connections.
total() {
    local port=$1 count=$2; shift 2
    valgrind --tool=callgrind --callgrind-out-file=cg.out "$@" > valgrind.log 2>&1 &
    local pid=$!
    for _ in $(seq 1 300); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
    python3 connect.py "$port" "$count"
    kill -TERM $pid
    wait $pid || true
    awk '/^summary:/ { print $2 }' cg.out
}

per_connection() {
    local port=$1; shift
    local few many
    few=$(total "$port" $FEW "$@")
    many=$(total "$port" $MANY "$@")
    echo $(( (many - few) / (MANY - FEW) ))
}

printf 'instructions per new TLS connection (%d - %d connections)\n' $MANY $FEW
printf '  latchkey %s\n' "$(per_connection "$lk_port" ./latchkey serve --config latchkey.yaml)"
printf '  nginx    %s\n' "$(per_connection "$ngx_port" nginx -c "$work/nginx.conf")"
