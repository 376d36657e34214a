import Testing
@testable import LatchkeyTLS

@Suite struct CertificatePEMTests {
    @Test func textWithoutACertificateIsMalformedAndNamesTheFile() {
        #expect(throws: TLSError(.malformed, "cert.pem: no PEM certificate (expected -----BEGIN CERTIFICATE-----)")) {
            try Certificate.chain(pem: Array("hello\n".utf8), origin: "cert.pem")
        }
    }

    @Test func aTruncatedCertificateIsMalformed() {
        let truncated = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n"
        #expect { try Certificate.chain(pem: Array(truncated.utf8), origin: "cert.pem") } throws: { error in
            (error as? TLSError)?.kind == .malformed && (error as? TLSError)?.message.hasPrefix("cert.pem: ") == true
        }
    }
}
