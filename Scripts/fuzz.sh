#!/usr/bin/env bash
# Fuzzes LatchkeyHTTP's parsers with libFuzzer for SECONDS in all (default 600).
#
#   Scripts/fuzz.sh [SECONDS] [request|response|all]
#
# Targets (Tests/Fuzz/, each with FuzzDriving.swift): `request` is RequestDecoder (and
# HTTPResponseLine) on what clients send, `response` is ResponseDecoder on what upstreams
# answer. `all` (the default) runs both, one after the other, SECONDS/2 each, so the total
# stays SECONDS. The machine is shared: one fuzzing process at a time, no -jobs.
#
# Builds Sources/LatchkeyHTTP/*.swift once with -sanitize=fuzzer,address into a static
# library under .build-fuzz/lib/ (no package build involved), links each target against it
# into its own binary (.build-fuzz/TARGET-decoder-fuzz), seeds a corpus with valid and
# hostile messages, and exits non-zero if libFuzzer reports a crash, a leak or a sanitizer
# error in any target. Each target keeps its corpus, seeds, dictionary and artifacts in
# .build-fuzz/TARGET/; replay a crash input with
#   .build-fuzz/response-decoder-fuzz .build-fuzz/response/artifacts/crash-…
set -euo pipefail

seconds="${1:-600}"
which="${2:-all}"
case "$which" in
    request | response) targets=("$which"); per_target="$seconds" ;;
    all) targets=(request response); per_target=$(( seconds / 2 > 0 ? seconds / 2 : 1 )) ;;
    *) echo "usage: Scripts/fuzz.sh [SECONDS] [request|response|all]" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.build-fuzz"

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

# The toolchain's lld: gold warns about every ASan helper symbol it cannot export.
flags=(-swift-version 6 -O -g -sanitize=fuzzer,address -parse-as-library -use-ld=lld
       -module-cache-path "$out/module-cache")
sources=("$root"/Sources/LatchkeyHTTP/*.swift)
library="$out/lib/libLatchkeyHTTP.a"
mkdir -p "$out/lib"
if [ ! -f "$library" ] || [ -n "$(find "${sources[@]}" -newer "$library")" ]; then
    echo "fuzz.sh: compiling $library" >&2
    swiftc "${flags[@]}" -module-name LatchkeyHTTP -emit-library -static \
        -emit-module -emit-module-path "$out/lib/LatchkeyHTTP.swiftmodule" \
        "${sources[@]}" -o "$library"
fi
for target in "${targets[@]}"; do
    binary="$out/$target-decoder-fuzz"
    case "$target" in
        request) entry=("$root/Tests/Fuzz/RequestDecoderFuzz.swift") module=RequestDecoderFuzz ;;
        response) entry=("$root/Tests/Fuzz/FuzzedResponseDecoder.swift" "$root/Tests/Fuzz/ResponseDecoderFuzz.swift") module=ResponseDecoderFuzz ;;
    esac
    driving="$root/Tests/Fuzz/FuzzDriving.swift"
    if [ ! -x "$binary" ] || [ -n "$(find "$library" "$driving" "${entry[@]}" -newer "$binary")" ]; then
        echo "fuzz.sh: compiling $binary" >&2
        swiftc "${flags[@]}" -module-name "$module" -I "$out/lib" -L "$out/lib" -lLatchkeyHTTP \
            "$driving" "${entry[@]}" -o "$binary"
    fi
    mkdir -p "$out/$target/corpus" "$out/$target/seeds" "$out/$target/artifacts"
done

# Seeds: one file per message, written with printf so \r\n are real bytes.
seed() { printf "$3" > "$out/$1/seeds/$2"; }
seed request get 'GET / HTTP/1.1\r\nHost: example.com\r\n\r\n'
seed request post-length 'POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello'
seed request post-chunked 'POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n'
seed request pipelined 'GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'
seed request http10 'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n'
seed request continue 'PUT /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc'
seed request cl-te 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
seed request cl-conflict 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nContent-Length: 5, 5\r\n\r\nabcd'
seed request te-gzip 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n'
seed request obs-fold 'GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n'
seed request nul 'GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n'
seed request bare-lf 'GET / HTTP/1.1\nHost: a\n\n'
seed request chunk-overflow 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n'
seed request h2 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
seed request leading-crlf '\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n'
seed request response 'HTTP/1.1 200 OK\r\n'
# A response seed's first byte is the target's, not the stream's: \x00 for the answer to a
# GET, \x01 for the answer to a HEAD.
seed response length '\x00HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello'
seed response chunked-trailers '\x00HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: T\r\n\r\n3;a=b\r\nabc\r\n2\r\nde\r\n0\r\nT: v\r\nU: w\r\n\r\n'
seed response cl-te '\x00HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n'
seed response cl-conflict '\x00HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!'
seed response cl-list '\x00HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\nabc'
seed response cl-negative '\x00HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'
seed response cl-overflow '\x00HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\nx'
seed response cl-max '\x00HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\nx'
seed response continue-then-200 '\x00HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'
seed response early-hints '\x00HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n'
seed response switching '\x00HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x02hi'
seed response no-content-with-body '\x00HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\nabc'
seed response not-modified '\x00HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n'
seed response head '\x01HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n'
seed response head-chunked '\x01HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
seed response close-delimited '\x00HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nto the end'
seed response te-gzip '\x00HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nzz'
seed response http10-keep-alive '\x00HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nokHTTP/1.0 200 OK\r\n\r\n'
seed response http10-close '\x00HTTP/1.0 200 OK\r\n\r\nold'
seed response bare-lf '\x00HTTP/1.1 200 OK\nContent-Length: 1\n\nx'
seed response obs-fold '\x00HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n'
seed response nul '\x00HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n'
seed response chunk-huge '\x00HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nx'
seed response chunk-max '\x00HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nxy'
seed response chunk-negative '\x00HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nx\r\n0\r\n\r\n'
seed response http2 '\x00HTTP/2 200\r\n\r\n'
seed response status-bounds '\x00HTTP/1.1 099 Low\r\n\r\nHTTP/1.1 1000 High\r\n\r\n'
seed response request-line '\x00GET / HTTP/1.1\r\nHost: a\r\n\r\n'
seed response leading-crlf '\x00\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'

dictionary() { cat > "$out/$1/http.dict"; }
common='"\x0d\x0a"
"\x0d\x0a\x0d\x0a"
"HTTP/1.1"
"HTTP/1.0"
"HTTP/2.0"
"Content-Length: "
"Transfer-Encoding: "
"chunked"
"Connection: "
"close"
"keep-alive"
";ext=\"v\""
"0\x0d\x0a\x0d\x0a"
"ffffffffffffffff"
"18446744073709551615"'
dictionary request <<DICT
$common
" HTTP/1.1\x0d\x0a"
" HTTP/1.0\x0d\x0a"
"GET"
"POST"
"Host: "
"Expect: 100-continue"
DICT
dictionary response <<DICT
$common
"HTTP/1.1 200 OK\x0d\x0a"
" 100 Continue\x0d\x0a"
" 101 Switching Protocols\x0d\x0a"
" 103 "
" 204 "
" 304 "
"Upgrade: websocket"
"Trailer: "
", chunked"
"gzip"
DICT

# Swift's own crash handler reads the crashed process's memory and trips ASan, hiding the
# real report: leave crash reporting to libFuzzer.
export SWIFT_BACKTRACE=enable=no
failed=0
for target in "${targets[@]}"; do
    echo "fuzz.sh: fuzzing the $target decoder for ${per_target}s" >&2
    status=0
    "$out/$target-decoder-fuzz" "$out/$target/corpus" "$out/$target/seeds" \
        -dict="$out/$target/http.dict" \
        -max_len=2048 \
        -max_total_time="$per_target" \
        -print_final_stats=1 \
        -artifact_prefix="$out/$target/artifacts/" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "fuzz.sh: libFuzzer found a problem in the $target decoder (exit $status);" \
             "see $out/$target/artifacts/" >&2
        failed="$status"
    fi
done
[ "$failed" -eq 0 ] || exit "$failed"
echo "fuzz.sh: no findings in ${seconds}s (${targets[*]})" >&2
