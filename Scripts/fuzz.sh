#!/usr/bin/env bash
# Fuzzes with libFuzzer for SECONDS in all (default 600).
#
#   Scripts/fuzz.sh [SECONDS] [request|response|exchange|config|all]
#
# Targets (Tests/Fuzz/): `request` is RequestDecoder (and HTTPResponseLine) on what clients
# send, `response` is ResponseDecoder on what upstreams answer, both driven by
# FuzzDriving.swift; `exchange` is HTTP1ExchangeMachine, one upstream exchange driven by a
# script of events (ExchangeMachineFuzz.swift); `config` is ConfigLoader on a configuration
# file's bytes, seeded with Configs/ (ConfigLoaderFuzz.swift). `all` (the default) runs the
# four, one after the other, SECONDS/4 each, so the total stays SECONDS. The machine is
# shared: one fuzzing process at a time, no -jobs.
#
# The decoder targets link Sources/LatchkeyHTTP, built once with -sanitize=fuzzer,address
# into a static library under .build-fuzz/lib/ (no package build involved: it imports
# nothing). The exchange and config targets link LatchkeyConfig and everything it imports
# (LatchkeyUpstream among them, and the package dependencies), which SwiftPM builds
# instrumented in .build-fuzz/package/ (release, compiled for testing: the machine is
# internal). Each target is its own binary (.build-fuzz/request-decoder-fuzz,
# response-decoder-fuzz, exchange-machine-fuzz, config-loader-fuzz); the
# script seeds a corpus and exits non-zero if libFuzzer reports a crash, a leak or a
# sanitizer error in any target. Each target keeps its corpus, seeds, dictionary and
# artifacts in .build-fuzz/TARGET/; replay a crash input with
#   .build-fuzz/response-decoder-fuzz .build-fuzz/response/artifacts/crash-…
set -euo pipefail

seconds="${1:-600}"
which="${2:-all}"
case "$which" in
    request | response | exchange | config) targets=("$which"); per_target="$seconds" ;;
    all) targets=(request response exchange config); per_target=$(( seconds / 4 > 0 ? seconds / 4 : 1 )) ;;
    *) echo "usage: Scripts/fuzz.sh [SECONDS] [request|response|exchange|config|all]" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.build-fuzz"
fuzz="$root/Tests/Fuzz"

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

# True when $1 is missing or older than any of the other files.
stale() {
    local product="$1"
    shift
    [ ! -e "$product" ] || [ -n "$(find "$@" -newer "$product")" ]
}

# LatchkeyConfig and all it imports, built instrumented, for the targets that link package
# modules; sets `objects` and `options` (the Swift modules, the C targets' generated module
# maps, the system libraries' own, and the libraries). One build serves both targets: its
# closure holds LatchkeyUpstream's. SwiftPM rebuilds what changed, and builds only that
# closure, so the objects are the same whichever target asks first.
package_closure() {
    # One -sanitize=fuzzer,address: swiftc keeps only the last of separate -sanitize= flags,
    # and SwiftPM's `--sanitize fuzzer --sanitize address` passes two, which built objects
    # with no coverage: libFuzzer saw none of the package's branches. The C targets get
    # ASan and coverage from their own flags.
    swift build --quiet -c release --package-path "$root" --scratch-path "$out/package" \
        --target LatchkeyConfig -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing \
        -Xcc -fsanitize=fuzzer-no-link,address
    objects=("$out"/package/release/*.build/*.o)
    options=(-I "$out/package/release/Modules")
    for map in "$out"/package/release/*.build/module.modulemap; do
        if compgen -G "$(dirname "$map")/*.o" >/dev/null; then options+=(-Xcc -fmodule-map-file="$map"); fi
    done
    for library in CCurl COpenSSL CYAML; do options+=(-I "$root/Sources/$library"); done
    options+=(-lcurl -lssl -lcrypto -lyaml)
}

declare -A binaries
declare -A max_len=([request]=2048 [response]=2048 [exchange]=2048 [config]=32768)
for target in "${targets[@]}"; do
    # Each target: its binary, its module, its sources, the objects it links, and the
    # options that find their modules and the system libraries they need.
    case "$target" in
        request)
            binary="$out/request-decoder-fuzz" module=RequestDecoderFuzz
            entry=("$fuzz/FuzzDriving.swift" "$fuzz/RequestDecoderFuzz.swift")
            objects=("$library") options=(-I "$out/lib") ;;
        response)
            binary="$out/response-decoder-fuzz" module=ResponseDecoderFuzz
            entry=("$fuzz/FuzzDriving.swift" "$fuzz/FuzzedResponseDecoder.swift" "$fuzz/ResponseDecoderFuzz.swift")
            objects=("$library") options=(-I "$out/lib") ;;
        exchange)
            binary="$out/exchange-machine-fuzz" module=ExchangeMachineFuzz
            entry=("$fuzz/FuzzDriving.swift" "$fuzz/FuzzedResponseDecoder.swift" "$fuzz/FuzzScript.swift" "$fuzz"/Exchange*.swift)
            package_closure ;;
        config)
            binary="$out/config-loader-fuzz" module=ConfigLoaderFuzz
            entry=("$fuzz/ConfigLoaderFuzz.swift")
            package_closure ;;
    esac
    binaries[$target]="$binary"
    if stale "$binary" "${objects[@]}" "${entry[@]}"; then
        echo "fuzz.sh: compiling $binary" >&2
        swiftc "${flags[@]}" -module-name "$module" "${options[@]}" "${entry[@]}" "${objects[@]}" -o "$binary"
    fi
done
# Every target's directories, whichever run: the seeds below are written for all.
for target in request response exchange config; do
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
# An exchange seed is a script (Tests/Fuzz/ExchangeEvent.swift): three bytes for the request
# (\x00 a GET, \x04 a HEAD, \x09 a POST of a length, \x0e a chunked PUT, \x10 with
# `Connection: close`; a timeout byte), then events: c/C a new or pooled connection, W
# write all, b/B body, e its end, h a response piece by index, r raw response bytes, z the
# upstream's close, R a reset, E a refused write, n/m/u the delegate's pause and resume, k
# its cancel, t/i timers, + time.
seed exchange get '\x00\x00\x0acWh\x00h\x01h\x02h\x03'
seed exchange head '\x04\x00\x0acWh\x00h\x01h\x02'
seed exchange request-closes '\x10\x00\x0acWh\x13'
seed exchange http10 '\x00\x00\x0acWh\x08h\x0eh\x02'
seed exchange followed '\x00\x00\x0acWr\x28HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nXY'
seed exchange reused-closed '\x00\x00\x0aCWzcWh\x13'
seed exchange reused-reset '\x00\x00\x0aCWRCWh\x13'
seed exchange past-resend-limit '\x0b\x82\x0aCB\xffB\x05b\x01xWz'
seed exchange post-length '\x09\x05\x0acWb\x03abcwb\x02deWh\x13'
seed exchange partial-writes '\x09\x05\x0acp\x03p\x00p\x10b\x05helloWh\x13'
seed exchange put-chunked '\x0e\x00\x0acWb\x05helloWeWh\x00h\x04h\x02h\x05h\x06'
seed exchange early-answer '\x09\x20\x0acWb\x04abcdh\x0db\x04efghEh\x01h\x02h\x03'
seed exchange paused '\x00\x00\x0acWnh\x00h\x04h\x02h\x05h\x05h\x06umu'
seed exchange trailers '\x00\x00\x0acWh\x00h\x04h\x10h\x02h\x05r\x030\r\nh\x11'
seed exchange close-delimited '\x00\x00\x0acWh\x00h\x02r\x04dataz'
seed exchange interim '\x00\x00\x0acWh\x07h\x0fh\x13'
seed exchange switch '\x00\x00\x0acWh\x0a'
seed exchange cancel-on-delivery '\x00\x00\x0acWkh\x13'
seed exchange connect-fails '\x00\x00\x0aXc'
seed exchange first-byte-timeout '\x00\x00\x0acW+\x20t'
seed exchange idle '\x00\x00\x0aCWh\x00iii'
# The configuration's seeds are the example configurations.
cp "$root"/Configs/*.yaml "$root"/Configs/systemd/latchkey.yaml "$out/config/seeds/"

dictionary() { cat > "$out/$1/fuzz.dict"; }
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
dictionary exchange <<DICT
$common
"HTTP/1.1 200 OK\x0d\x0a"
"cW"
"CW"
"Wh\x13"
"h\x00h\x01h\x02h\x03"
"h\x00h\x04h\x02h\x05h\x06"
"+\xff"
DICT

dictionary config <<DICT
"routes:"
"identities:"
"credentials:"
"listeners:"
"store:"
"limits:"
"- name: "
"path: /"
"host: "
"upstream: http://127.0.0.1:1"
"inject:"
"header: Authorization"
"value: \"Bearer {token}\""
"credential: "
"identity: "
"grant: "
"token_url: "
"client_id: "
"client_secret: "
"steps:"
"capture:"
"json: "
"tls:"
"inbound:"
"mode: forward"
"&a "
"*a"
"<<: "
"!!str "
"!!int "
"---"
"? "
"- "
": "
"{"
"}"
"["
"]"
"|"
">"
"'"
"\""
"~"
"0x1F"
"1:30"
"1m30s"
"64KiB"
"yes"
DICT

# Swift's own crash handler reads the crashed process's memory and trips ASan, hiding the
# real report: leave crash reporting to libFuzzer.
export SWIFT_BACKTRACE=enable=no
failed=0
for target in "${targets[@]}"; do
    echo "fuzz.sh: fuzzing $target for ${per_target}s" >&2
    status=0
    "${binaries[$target]}" "$out/$target/corpus" "$out/$target/seeds" \
        -dict="$out/$target/fuzz.dict" \
        -max_len="${max_len[$target]}" \
        -max_total_time="$per_target" \
        -print_final_stats=1 \
        -artifact_prefix="$out/$target/artifacts/" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "fuzz.sh: libFuzzer found a problem in $target (exit $status);" \
             "see $out/$target/artifacts/" >&2
        failed="$status"
    fi
done
[ "$failed" -eq 0 ] || exit "$failed"
echo "fuzz.sh: no findings in ${seconds}s (${targets[*]})" >&2
