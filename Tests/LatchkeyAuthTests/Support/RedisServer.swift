import Foundation
@testable import LatchkeyAuth
import LatchkeyConfig
#if canImport(Glibc)
import Glibc
#endif

/// A redis-server of one test's own, on a free loopback port below the ephemeral range, without persistence: started
/// by `init`, stopped (and started again on the same port) by the test, and stopped when
/// the value goes away. Scripts/test.sh installs redis-server; without it the tests fail.
final class RedisServer: @unchecked Sendable {
    let port: Int
    var endpoint: RedisEndpoint { RedisEndpoint(host: "127.0.0.1", port: port) }
    private let directory: TemporaryDirectory
    private let arguments: [String]
    /// Only the test that owns the server touches it.
    private var process: Process?

    /// `arguments` are more redis-server options, e.g. `["--requirepass", "…"]`.
    init(arguments: [String] = []) throws {
        directory = try TemporaryDirectory()
        port = try Self.freePort()
        self.arguments = arguments
        try start()
    }

    deinit {
        stop()
    }

    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.executable())
        process.arguments = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", directory.path, "--logfile", directory.appending("redis.log")] + arguments
        try process.run()
        self.process = process
        // Ready once it accepts a connection.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.accepts(port) { return }
            usleep(20_000)
        }
        throw RedisServerError("redis-server did not start on port \(port): \((try? String(contentsOfFile: directory.appending("redis.log"), encoding: .utf8)) ?? "")")
    }

    /// SIGKILL: redis-server inherits the signal mask of the test's thread, where the
    /// dispatch threads block SIGTERM; it keeps nothing to save anyway.
    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    private static func executable() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") + ["/usr/bin", "/usr/sbin"] {
            let candidate = "\(directory)/redis-server"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw RedisServerError("redis-server is not installed (apt-get install redis-server; Scripts/test.sh does)")
    }

    /// A free port below the kernel's ephemeral range. A port from that range could be
    /// handed to another test's connection while this server is stopped, and a readiness
    /// probe to it while nothing listens may connect to itself (TCP simultaneous open): both
    /// were seen as a restarted server refusing connections.
    private static func freePort() throws -> Int {
        let ephemeralStart = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } } ?? 32768
        let candidates = 10_000..<max(ephemeralStart, 10_001)
        for _ in 0..<100 {
            let port = Int.random(in: candidates)
            if bindable(port) { return port }
        }
        throw RedisServerError("no free port below \(ephemeralStart)")
    }

    private static func bindable(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func loopback(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// A store on this server under a prefix of its own: empty, and apart from every other.
    func store(key: StoreKey? = nil, prefix: String = "test-\(UUID().uuidString):", password: String? = nil,
               leaseDuration: Duration = RefreshLease.duration, notices: @escaping @Sendable (String) -> Void = { _ in }) -> RedisTokenStore {
        RedisTokenStore(endpoint: endpoint, password: password, keyPrefix: prefix, key: key, timeout: .seconds(2),
                        leaseDuration: leaseDuration, backoff: Backoff(initial: .milliseconds(50), maximum: .milliseconds(200)), notices: notices)
    }
}

struct RedisServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
