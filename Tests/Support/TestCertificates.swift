import Foundation

/// ECDSA P-256 certificates made by the `openssl` command in a temporary directory that
/// goes away with this object: CAs, and leaves they sign for servers (localhost,
/// 127.0.0.1) or clients (mTLS).
public final class TestCertificates: Sendable {
    public struct Files: Sendable {
        public let cert: String
        public let key: String
    }

    private let temporary: TemporaryDirectory
    public var directory: String { temporary.path }

    public init() throws {
        temporary = try TemporaryDirectory(prefix: "latchkey-tls")
    }

    /// A self-signed CA named `commonName`.
    public func authority(_ name: String, commonName: String) throws -> Files {
        let files = self.files(name)
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                     "-keyout", files.key, "-out", files.cert, "-subj", "/CN=\(commonName)",
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        return files
    }

    /// A leaf `authority` signs: a server's for `localhost` and `127.0.0.1`, or a client's.
    public func leaf(_ name: String, commonName: String, signedBy authority: Files, client: Bool = false) throws -> Files {
        let files = self.files(name)
        let usage = client ? "extendedKeyUsage=clientAuth" : "extendedKeyUsage=serverAuth"
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                     "-keyout", files.key, "-out", files.cert, "-subj", "/CN=\(commonName)",
                     "-CA", authority.cert, "-CAkey", authority.key,
                     "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-addext", usage,
                     "-addext", "basicConstraints=critical,CA:FALSE"])
        return files
    }

    public func contents(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private func files(_ name: String) -> Files {
        Files(cert: "\(directory)/\(name).pem", key: "\(directory)/\(name).key")
    }

    private func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw OpenSSLCommandFailed(arguments: arguments) }
    }

    public struct OpenSSLCommandFailed: Error {
        public let arguments: [String]
    }
}
