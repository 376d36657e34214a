import Foundation
import LatchkeyConfig
import LatchkeyTestSupport
import Logging
import Testing
@testable import Latchkey

/// A running `ProxyRuntime` on a loopback port, asked over a real socket: admission, the
/// exchange and its one ending path together, with no upstream that answers.
@Suite(.serialized) struct ProxyRuntimeTests {
    private static let yaml = """
        server: { loops: 1 }
        listeners:
          - { listen: "127.0.0.1:0" }
        credentials:
          key: { value: the-key }
        routes:
          - name: api
            path: /api
            upstream: http://127.0.0.1:1
            inject: [{ header: X-Key, value: "{token}", credential: key }]
        """

    @Test func admitsRefusesAndFailsOverLoopback() throws {
        let config = try ConfigTestSupport.load(Self.yaml)
        let runtime = try ProxyRuntime(config: config, credentials: try CredentialStore(config: config, environment: [:]),
                                       logger: Logger(label: "test"), sink: nil)
        defer { runtime.shutdown() }
        let port = try #require(runtime.listeners[0].boundAddress.port)

        #expect(try Self.status(of: "GET /.latchkey/health", port: port) == 200)
        #expect(try Self.status(of: "GET /elsewhere", port: port) == 404)
        #expect(try Self.status(of: "TRACE /api/x", port: port) == 405)
        #expect(try Self.status(of: "GET /api/x", port: port, fields: "Sec-Fetch-Site: same-site\r\n") == 403)
        // Port 1 refuses the connection: the exchange ends as an upstream failure.
        #expect(try Self.status(of: "GET /api/x", port: port) == 502)
    }

    /// The status of one request on a fresh connection (closed by the request).
    private static func status(of requestLine: String, port: Int, fields: String = "") throws -> Int? {
        let fd = try LoopbackClient.connect(port: UInt16(port))
        defer { close(fd) }
        let request = Array("\(requestLine) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(fields)Connection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += chunk[..<count]
        }
        // "HTTP/1.1 200 ...": the status is the second word of the first line.
        let words = String(decoding: response.prefix(32), as: UTF8.self).split(separator: " ")
        return words.count > 1 ? Int(words[1]) : nil
    }
}
