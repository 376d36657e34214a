import COpenSSL
import Foundation
import COpenSSLShims
import LatchkeyTLS
import LatchkeyTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The tests' TLS client: OpenSSL's client on a blocking loopback socket (reads give up
/// after 5 s), configured the way each test needs — versions, ALPN, a client certificate,
/// a session to resume.
final class TLSTestClient {
    struct Options {
        var trusted: [Certificate] = []
        var version: Int32?
        var alpn: [String] = ["http/1.1"]
        var identity: TLSIdentity?
        /// An SSL_SESSION from an earlier connection (SSL_get1_session), to resume.
        var session: OpaquePointer?
    }

    let fd: Int32
    let context: OpaquePointer
    let ssl: OpaquePointer

    init(port: Int, _ options: Options) throws {
        fd = try LoopbackClient.connect(port: UInt16(port), receiveTimeout: 5)
        context = SSL_CTX_new(TLS_client_method())!
        if let version = options.version {
            // TLS 1.1 needs security level 0 in OpenSSL 3 (and Debian's default is 2).
            SSL_CTX_set_security_level(context, 0)
            SSL_CTX_set_cipher_list(context, "DEFAULT:@SECLEVEL=0")
            _ = lk_ssl_ctx_set_min_proto_version(context, version)
            _ = lk_ssl_ctx_set_max_proto_version(context, version)
        }
        let store = SSL_CTX_get_cert_store(context)
        for certificate in options.trusted { X509_STORE_add_cert(store, certificate.x509) }
        SSL_CTX_set_verify(context, options.trusted.isEmpty ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, nil)
        if let identity = options.identity {
            SSL_CTX_use_certificate(context, identity.leaf.x509)
            SSL_CTX_use_PrivateKey(context, identity.key.pkey)
        }
        ssl = SSL_new(context)!
        SSL_set_fd(ssl, fd)
        _ = lk_ssl_set_tlsext_host_name(ssl, "localhost")
        if !options.alpn.isEmpty {
            let wire = options.alpn.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
            SSL_set_alpn_protos(ssl, wire, UInt32(wire.count))
        }
        if let session = options.session { SSL_set_session(ssl, session) }
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
        close(fd)
    }

    /// SSL_connect: whether the client completed its side of the handshake.
    func handshake() -> Bool {
        SSL_connect(ssl) == 1
    }

    var resumed: Bool { SSL_session_reused(ssl) == 1 }

    /// The session to resume with, once a response has been read (TLS 1.3 sends its
    /// tickets after the handshake).
    func session() -> OpaquePointer? { SSL_get1_session(ssl) }

    func send(_ text: String) {
        var bytes = Array(text.utf8)
        send(&bytes)
    }

    func send(_ bytes: inout [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            var written = 0
            let status = bytes[offset...].withUnsafeBytes { SSL_write_ex(ssl, $0.baseAddress, $0.count, &written) }
            guard status == 1 else { return }
            offset += written
        }
    }

    /// Reads until `text` holds `marker`, the server closes, or 5 s pass.
    func read(until marker: String) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            var count = 0
            guard SSL_read_ex(ssl, &buffer, buffer.count, &count) == 1 else { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Reads until SSL_read fails: how many bytes came, the last of them as text, and
    /// SSL_get_error's code for the end (SSL_ERROR_ZERO_RETURN: the server's close_notify).
    func readToTheEnd() -> (count: Int, tail: String, error: Int32) {
        var count = 0
        var tail: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var read = 0
            let status = SSL_read_ex(ssl, &buffer, buffer.count, &read)
            guard status == 1 else { return (count, String(decoding: tail, as: UTF8.self), SSL_get_error(ssl, status)) }
            count += read
            tail = Array((tail + buffer[0..<read]).suffix(256))
        }
    }

    /// Sends a TLS 1.3 KeyUpdate that asks the server for one in reply (RFC 8446 §4.6.3).
    func requestKeyUpdate() -> Bool {
        SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) == 1 && SSL_do_handshake(ssl) == 1
    }

    /// Reads a response with a Content-Length body; returns the body's length.
    func readResponseBodyLength() -> Int? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var expected: Int?
        while expected.map({ received.count < $0 }) ?? true {
            var count = 0
            guard SSL_read_ex(ssl, &buffer, buffer.count, &count) == 1 else { return nil }
            received += buffer[0..<count]
            if expected == nil, let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                guard let line = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
                    let length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) else { return nil }
                received.removeSubrange(..<end.upperBound)
                expected = length
            }
        }
        return received.count
    }
}
