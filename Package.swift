// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Latchkey",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "latchkey", targets: ["latchkey"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        // C modules: Linux headers Swift cannot see, libcurl, OpenSSL, hiredis and libyaml, and
        // fixed-arity wrappers for the C variadics and macros Swift cannot call.
        .target(name: "CLinux"),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(name: "CCurlShims", dependencies: ["CCurl"]),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // OpenSSL's macros and callbacks Swift cannot call or write: SSL_CTX_ctrl wrappers
        // and the session-ticket key callback. No policy lives here.
        .target(name: "COpenSSLShims", dependencies: ["COpenSSL"]),
        // No pkgConfig: hiredis.pc adds -D_FILE_OFFSET_BITS=64, a flag SwiftPM refuses with
        // a warning; the header is found as <hiredis/hiredis.h> in the system include path.
        .systemLibrary(
            name: "CHiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),

        // Pure HTTP/1.1 codec: bytes in, events out. No sockets, no clocks.
        .target(name: "LatchkeyHTTP"),
        // One epoll event loop per thread: fds, timers, cross-thread wake-ups.
        .target(name: "LatchkeyLoop", dependencies: ["CLinux"]),
        // The system calls of the control plane and the CLI, each wrapped once with a typed
        // face: files, locks, the process's identity, spawning. (The loop, the server's
        // sockets, curl and the log writer keep theirs.)
        .target(name: "LatchkeySystem", dependencies: ["LatchkeyLoop"]),
        // OpenSSL's X.509, keys and server-side TLS with a typed face: certificates and keys
        // read from PEM, the local certificate authority's minting, TLS server contexts and
        // the per-connection TLS session the server drives without blocking.
        .target(name: "LatchkeyTLS", dependencies: ["COpenSSL", "COpenSSLShims"]),
        // Listeners and client connections on the loop.
        .target(name: "LatchkeyServer", dependencies: ["LatchkeyHTTP", "LatchkeyLoop", "LatchkeyTLS", "CLinux"]),
        // libcurl multi driven by the loop's epoll.
        .target(
            name: "LatchkeyUpstream",
            dependencies: ["LatchkeyHTTP", "LatchkeyLoop", "CCurlShims", .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        // Log lines formatted, masked and written by a thread of their own.
        .target(
            name: "LatchkeyLogging",
            dependencies: [
                "LatchkeyHTTP",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // The configuration: YAML walked into validated values, and the secrets it names.
        .target(
            name: "LatchkeyConfig",
            dependencies: [
                "LatchkeyLoop", "LatchkeySystem", "LatchkeyUpstream", "LatchkeyLogging", "LatchkeyTLS",
                "CYAML",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Identities, grants and the token lifecycle: the control plane.
        .target(
            name: "LatchkeyAuth",
            dependencies: [
                "LatchkeyHTTP", "LatchkeyLoop", "LatchkeySystem", "LatchkeyServer", "LatchkeyUpstream", "LatchkeyConfig", "LatchkeyTLS", "COpenSSL", "CHiredis",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Routes, the proxy pipeline, admin endpoints: the wiring.
        .target(
            name: "Latchkey",
            dependencies: [
                "LatchkeyHTTP", "LatchkeyLoop", "LatchkeyServer", "LatchkeyUpstream", "LatchkeyConfig", "LatchkeyAuth", "LatchkeyLogging", "LatchkeyTLS",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(
            name: "latchkey",
            dependencies: [
                "Latchkey", "LatchkeyConfig", "LatchkeyAuth", "LatchkeyUpstream", "LatchkeyLoop", "LatchkeySystem", "LatchkeyLogging", "LatchkeyTLS",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),

        // The hand-written socket peers that several test targets share.
        .target(
            name: "LatchkeyTestSupport",
            dependencies: ["LatchkeyConfig", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Support"
        ),
        .testTarget(name: "LatchkeyHTTPTests", dependencies: ["LatchkeyHTTP", "LatchkeyTestSupport"]),
        .testTarget(name: "LatchkeyLoopTests", dependencies: ["LatchkeyLoop"]),
        .testTarget(name: "LatchkeyTLSTests", dependencies: ["LatchkeyTLS", "COpenSSL"]),
        .testTarget(
            name: "LatchkeyLoggingTests",
            dependencies: [
                "LatchkeyLogging", "LatchkeyTestSupport",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(name: "LatchkeyServerTests", dependencies: ["LatchkeyServer", "LatchkeyHTTP", "LatchkeyLoop", "LatchkeyTLS", "COpenSSL", "COpenSSLShims", "LatchkeyTestSupport"]),
        .testTarget(name: "LatchkeyUpstreamTests", dependencies: ["LatchkeyUpstream", "LatchkeyHTTP", "LatchkeyLoop", "CCurlShims", "LatchkeyTestSupport"]),
        .testTarget(
            name: "LatchkeyAuthTests",
            dependencies: ["LatchkeyAuth", "LatchkeyConfig", "LatchkeyHTTP", "LatchkeyLoop", "LatchkeySystem", "LatchkeyUpstream", "LatchkeyTLS", "COpenSSL", "LatchkeyTestSupport"]
        ),
        .testTarget(
            name: "LatchkeyConfigTests",
            dependencies: [
                "LatchkeyConfig", "LatchkeyAuth", "LatchkeyUpstream", "LatchkeyTLS", "LatchkeyTestSupport", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "LatchkeyTests",
            dependencies: [
                "Latchkey", "LatchkeyConfig", "LatchkeyAuth", "LatchkeyHTTP", "LatchkeyServer", "LatchkeyUpstream", "LatchkeyTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Release builds optimise across the project's own modules (aggressive cross-module
// optimisation, which makes their bodies available to each other): a proxied request
// crosses six of them, and what stayed out of reach at a module's edge (calls not inlined,
// generics not specialised, values copied and retained) was about 3% of its instructions
// (Benchmarks/RESULTS.md). The C modules and the dependencies build as they are.
for target in package.targets where target.type == .regular || target.type == .executable {
    guard target.name.hasPrefix("Latchkey") || target.name == "latchkey" else { continue }
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]
}
