#!/usr/bin/env bash
# Fuzzes LatchkeyHTTP's RequestDecoder with libFuzzer for SECONDS (default 600).
#
#   Scripts/fuzz.sh [SECONDS]
#
# Builds Tests/Fuzz/RequestDecoderFuzz.swift together with Sources/LatchkeyHTTP/*.swift
# (one module, so no package build is involved) with -sanitize=fuzzer,address into
# .build-fuzz/, seeds a corpus with valid and hostile requests, runs one fuzzing process
# (the machine is shared: no -jobs), and exits non-zero if libFuzzer reports a crash, a
# leak or a sanitizer error. Crash inputs land in .build-fuzz/artifacts/; replay one with
#   .build-fuzz/request-decoder-fuzz .build-fuzz/artifacts/crash-…
set -euo pipefail

seconds="${1:-600}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.build-fuzz"
binary="$out/request-decoder-fuzz"
mkdir -p "$out/corpus" "$out/seeds" "$out/artifacts"

# libFuzzer and ASan come with the Swift toolchain's clang runtime
# (usr/lib/swift/clang/lib/linux/libclang_rt.fuzzer-x86_64.a in every swift.org Linux
# toolchain). A distribution that strips them needs its own compiler-rt of the same clang
# version, which apt cannot match reliably: say so rather than link a mismatched one.
toolchain="$(dirname "$(dirname "$(command -v swiftc)")")"
if ! ls "$toolchain"/lib/swift/clang/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
    echo "fuzz.sh: no libFuzzer runtime in $toolchain/lib/swift/clang/lib/linux;" \
         "install a swift.org toolchain (it ships compiler-rt)" >&2
    exit 2
fi

sources=("$root"/Sources/LatchkeyHTTP/*.swift)
if [ ! -x "$binary" ] || [ -n "$(find "${sources[@]}" "$root/Tests/Fuzz/RequestDecoderFuzz.swift" -newer "$binary")" ]; then
    echo "fuzz.sh: compiling $binary" >&2
    swiftc -swift-version 6 -O -g \
        -sanitize=fuzzer,address -parse-as-library \
        -module-name LatchkeyHTTPFuzz \
        -module-cache-path "$out/module-cache" \
        "${sources[@]}" "$root/Tests/Fuzz/RequestDecoderFuzz.swift" \
        -o "$binary"
fi

# Seeds: one file per request, written with printf so \r\n are real bytes.
seed() { printf "$2" > "$out/seeds/$1"; }
seed get 'GET / HTTP/1.1\r\nHost: example.com\r\n\r\n'
seed post-length 'POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello'
seed post-chunked 'POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n'
seed pipelined 'GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'
seed http10 'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n'
seed continue 'PUT /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc'
seed cl-te 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
seed cl-conflict 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nContent-Length: 5, 5\r\n\r\nabcd'
seed te-gzip 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n'
seed obs-fold 'GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n'
seed nul 'GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n'
seed bare-lf 'GET / HTTP/1.1\nHost: a\n\n'
seed chunk-overflow 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n'
seed h2 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
seed leading-crlf '\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n'
seed response 'HTTP/1.1 200 OK\r\n'

cat > "$out/http.dict" <<'DICT'
"\x0d\x0a"
"\x0d\x0a\x0d\x0a"
" HTTP/1.1\x0d\x0a"
" HTTP/1.0\x0d\x0a"
"HTTP/2.0"
"GET"
"POST"
"Host: "
"Content-Length: "
"Transfer-Encoding: "
"chunked"
"Connection: "
"close"
"keep-alive"
"Expect: 100-continue"
";ext=\"v\""
"0\x0d\x0a\x0d\x0a"
"ffffffffffffffff"
DICT

# Swift's own crash handler reads the crashed process's memory and trips ASan, hiding the
# real report: leave crash reporting to libFuzzer.
export SWIFT_BACKTRACE=enable=no
echo "fuzz.sh: fuzzing for ${seconds}s" >&2
status=0
"$binary" "$out/corpus" "$out/seeds" \
    -dict="$out/http.dict" \
    -max_len=2048 \
    -max_total_time="$seconds" \
    -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/" || status=$?
if [ "$status" -ne 0 ]; then
    echo "fuzz.sh: libFuzzer found a problem (exit $status); see $out/artifacts/" >&2
    exit "$status"
fi
echo "fuzz.sh: no findings in ${seconds}s" >&2
