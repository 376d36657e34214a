import COpenSSL
@testable import LatchkeyTLS
import Testing

/// The pure parts of the server's TLS policy: ALPN's choice and the failure reasons.
struct TLSServerPolicyTests {
    static func list(_ names: [String]) -> [UInt8] {
        names.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
    }

    @Test func alpnFindsHTTP11AmongTheClientsProtocols() {
        let offered = Self.list(["h2", "http/1.1"])
        let range = ALPN.http11(in: offered)
        #expect(range.map { Array(offered[$0]) } == Array("http/1.1".utf8))
    }

    @Test(arguments: [["h2"], ["http/1.0"], []] as [[String]])
    func alpnFindsNothingWithoutHTTP11(names: [String]) {
        #expect(ALPN.http11(in: Self.list(names)) == nil)
    }

    @Test func aMalformedALPNListFindsNothing() {
        #expect(ALPN.http11(in: [9, 0x68, 0x32] as [UInt8]) == nil)
        #expect(ALPN.http11(in: [0, 8] + Array("http/1.1".utf8)) == nil)
    }

    @Test(arguments: [
        (SSL_R_UNSUPPORTED_PROTOCOL, TLSHandshakeFailure.Reason.protocolVersion),
        (SSL_R_NO_SHARED_CIPHER, .noSharedCipher),
        (SSL_R_TLSV1_ALERT_UNKNOWN_CA, .certificateRefused),
        (SSL_R_SSLV3_ALERT_BAD_CERTIFICATE, .certificateRefused),
        (SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE, .noClientCertificate),
        (SSL_R_CERTIFICATE_VERIFY_FAILED, .clientCertificateRejected),
        (SSL_R_UNEXPECTED_EOF_WHILE_READING, .closed),
        (SSL_R_NO_APPLICATION_PROTOCOL, .other),
    ])
    func openSSLReasonsAreClassified(code: Int32, reason: TLSHandshakeFailure.Reason) {
        #expect(TLSHandshakeFailure.Reason(openSSLReason: code) == reason)
    }
}
