import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real TLS upstream for the TLS, mTLS and HTTP/2 tests: nginx on 127.0.0.1 with a test
/// CA, a server certificate for `localhost`/127.0.0.1, and a client certificate, all made
/// with the openssl CLI in a temporary directory. Started and stopped by the test.
final class TLSUpstream: @unchecked Sendable {
    static let available = FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")

    let directory: String
    let port: UInt16
    private let process: Process
    /// Size of `/big`, a static file of `patternByte`s.
    static let bigSize = 3 * 1024 * 1024 + 7

    var caFile: String { directory + "/ca.pem" }
    var clientCertificate: String { directory + "/client.pem" }
    var clientKey: String { directory + "/client.key" }
    var baseURL: String { "https://localhost:\(port)" }

    init() throws {
        directory = NSTemporaryDirectory() + "latchkey-tls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        port = try Self.freePort()
        try Data(patternBody(Self.bigSize)).write(to: URL(fileURLWithPath: directory + "/big"))
        let ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
        try Self.shell("""
            set -e
            cd '\(directory)'
            openssl req -x509 \(ec) -keyout ca.key -out ca.pem -days 1 -subj /CN=LatchkeyTestCA 2>/dev/null
            openssl req \(ec) -keyout server.key -out server.csr -subj /CN=localhost 2>/dev/null
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > server.ext
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 1 -extfile server.ext 2>/dev/null
            openssl req \(ec) -keyout client.key -out client.csr -subj /CN=latchkey-client 2>/dev/null
            openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 1 2>/dev/null
            """)
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log warn;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(directory)/tmp/body;
                proxy_temp_path \(directory)/tmp/proxy;
                fastcgi_temp_path \(directory)/tmp/fastcgi;
                uwsgi_temp_path \(directory)/tmp/uwsgi;
                scgi_temp_path \(directory)/tmp/scgi;
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(directory)/server.pem;
                    ssl_certificate_key \(directory)/server.key;
                    ssl_client_certificate \(directory)/ca.pem;
                    ssl_verify_client optional;
                    location = /big { default_type application/octet-stream; alias \(directory)/big; }
                    location / {
                        default_type text/plain;
                        return 200 "proto=$server_protocol client=$ssl_client_verify dn=$ssl_client_s_dn";
                    }
                }
            }
            """
        try config.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        process.arguments = ["-p", directory, "-e", directory + "/error.log", "-c", directory + "/nginx.conf"]
        try process.run()
        try waitUntilListening()
    }

    /// Stops the nginx this fixture started and removes the files. SIGKILL to its pid:
    /// `Process` spawns from a Swift pool thread whose signal mask blocks nearly everything,
    /// nginx inherits that mask, and a SIGTERM would never arrive. It runs as one process
    /// (`master_process off`), so there are no children to leave behind.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func waitUntilListening() throws {
        for _ in 0..<250 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = port.bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            close(fd)
            if connected == 0 { return }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        let log = (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? ""
        stop()
        throw TLSUpstreamError.notListening(log)
    }

    private static func shell(_ script: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TLSUpstreamError.setupFailed(process.terminationStatus) }
    }

    /// A loopback port that was free a moment ago.
    private static func freePort() throws -> UInt16 {
        let probe = try TestServer { _ in }
        defer { probe.stop() }
        return probe.port
    }
}

enum TLSUpstreamError: Error {
    case setupFailed(Int32)
    case notListening(String)
}
