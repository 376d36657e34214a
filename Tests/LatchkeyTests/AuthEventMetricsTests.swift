import LatchkeyAuth
import Testing
@testable import Latchkey

/// `latchkey_auth_events_total`, recorded into a registry of the test's own.
@Suite struct AuthEventMetricsTests {
    private let factory = MetricsRegistry()

    private func samples() -> [String: String] {
        MetricsTestSupport.samples(factory)
    }

    @Test func authEventsAreCountedPerIdentityAndEvent() {
        let sink = AuthEventMetrics.registered(identity: "idp", in: factory)
        sink.record(AuthEvent(identity: "idp", kind: .acquired))
        sink.record(AuthEvent(identity: "idp", kind: .refreshed))
        sink.record(AuthEvent(identity: "idp", kind: .refreshed))
        sink.record(AuthEvent(identity: "idp", kind: .failed, detail: "the IdP answered 503"))
        let samples = samples()
        #expect(samples[#"latchkey_auth_events_total{identity="idp",event="acquired"}"#] == "1")
        #expect(samples[#"latchkey_auth_events_total{identity="idp",event="refreshed"}"#] == "2")
        #expect(samples[#"latchkey_auth_events_total{identity="idp",event="failed"}"#] == "1")
        #expect(samples[#"latchkey_auth_events_total{identity="idp",event="login_required"}"#] == "0")
        #expect(samples[#"latchkey_auth_events_total{identity="idp",event="logged_out"}"#] == "0")
        // A failure's detail is for the log: it never becomes a label.
        #expect(!samples.keys.contains { $0.contains("503") })
    }

    @Test func identityLabelIsEscaped() {
        _ = AuthEventMetrics.registered(identity: "two\nlines \"quoted\"", in: factory)
        #expect(samples()[#"latchkey_auth_events_total{identity="two\nlines \"quoted\"",event="acquired"}"#] == "0")
    }
}
