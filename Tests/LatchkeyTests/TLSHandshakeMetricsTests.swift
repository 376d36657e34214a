import LatchkeyConfig
import LatchkeyServer
import LatchkeyTLS
import Testing
@testable import Latchkey

@Suite struct TLSHandshakeMetricsTests {
    private let factory = MetricsRegistry()

    private static let config = Config(listeners: [
        ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080)),
        ListenerConfig(name: "lan", address: .tcp(host: "0.0.0.0", port: 8443), inbound: .open,
                       tls: ListenerTLSConfig(certificate: .localCA)),
        ListenerConfig(name: "fwd", address: .tcp(host: "127.0.0.1", port: 3128), mode: .forward),
    ], routes: [])

    private func info(resumed: Bool) -> TLSConnectionInfo {
        TLSConnectionInfo(protocolVersion: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256", alpn: "http/1.1", resumed: resumed,
                          serverName: "localhost", clientSubject: nil)
    }

    @Test func handshakesAreCountedByOutcomeOnTLSAndForwardListenersOnly() {
        let metrics = ProxyMetrics(config: Self.config, registry: factory)
        metrics.tlsHandshakes.record(.completed(info(resumed: false)), listener: 1)
        metrics.tlsHandshakes.record(.completed(info(resumed: true)), listener: 1)
        metrics.tlsHandshakes.record(.completed(info(resumed: true)), listener: 1)
        metrics.tlsHandshakes.record(.failed(TLSHandshakeFailure(.plainHTTP, detail: "")), listener: 1)
        metrics.tlsHandshakes.record(.completed(info(resumed: false)), listener: 0)
        // A forward listener's: the handshakes inside its intercepted tunnels.
        metrics.tlsHandshakes.record(.failed(TLSHandshakeFailure(.certificateRefused, detail: "")), listener: 2)

        let samples = MetricsTestSupport.samples(factory)
        #expect(samples[#"latchkey_tls_handshakes_total{listener="lan",outcome="new"}"#] == "1")
        #expect(samples[#"latchkey_tls_handshakes_total{listener="lan",outcome="resumed"}"#] == "2")
        #expect(samples[#"latchkey_tls_handshakes_total{listener="lan",outcome="plain_http"}"#] == "1")
        for reason in TLSHandshakeFailure.Reason.allCases where reason != .plainHTTP {
            #expect(samples[#"latchkey_tls_handshakes_total{listener="lan",outcome="\#(reason.rawValue)"}"#] == "0")
        }
        #expect(samples[#"latchkey_tls_handshakes_total{listener="fwd",outcome="certificate_refused"}"#] == "1")
        #expect(!samples.keys.contains { $0.contains(#"listener="main""#) && $0.hasPrefix("latchkey_tls") })
    }
}
