import LatchkeyLogging
import LatchkeyTLS
import Testing
@testable import Latchkey

@Suite struct AccessLogTests {
    private func line(_ tls: TLSConnectionInfo, format: LogFormat) -> String {
        var fields: [(key: String, value: LogValue)] = [("method", .string("GET"))]
        AccessLog.append(tls, to: &fields)
        let bytes = LogLine.format(format, level: .info, label: "latchkey.access", message: "request", fields: fields, timestamp: "T")
        return String(decoding: bytes, as: UTF8.self)
    }

    private let mutual = TLSConnectionInfo(protocolVersion: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256", alpn: "http/1.1",
                                           resumed: false, serverName: nil, clientSubject: "CN=svc,O=Example Org")

    @Test func theProtocolAndTheClientCertificatesSubject() {
        #expect(line(mutual, format: .json).hasSuffix(#","method":"GET","tls":"TLSv1.3","client_subject":"CN=svc,O=Example Org"}"# + "\n"))
        #expect(line(mutual, format: .text).contains(" method=GET tls=TLSv1.3 client_subject="))
    }

    @Test func noSubjectWithoutAClientCertificate() {
        var plain = mutual
        plain.clientSubject = nil
        #expect(line(plain, format: .json).hasSuffix(#","tls":"TLSv1.3"}"# + "\n"))
    }
}
