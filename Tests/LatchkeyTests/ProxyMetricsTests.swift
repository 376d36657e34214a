import CoreMetrics
import LatchkeyUpstream
import LatchkeyConfig
import Testing
@testable import Latchkey

/// The proxy's series as `/.latchkey/metrics` renders them. Each test records into a
/// registry of its own, never into the process-wide MetricsSystem, which tests running in
/// parallel would share.
@Suite struct ProxyMetricsTests {
    private let factory = MetricsRegistry()

    static let config = Config(
        listeners: [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080)),
                    ListenerConfig(name: "pod", address: .unix(path: "/tmp/latchkey.sock"))],
        routes: [
            RouteConfig(name: "static", upstream: UpstreamConfig(url: "http://static.example")),
            RouteConfig(name: "oauth", pathPrefix: "/oauth", upstream: UpstreamConfig(url: "http://oauth.example"),
                        injections: [Injection(target: .header("Authorization"), source: .identity("idp"),
                                               template: CredentialTemplate(prefix: "Bearer "))]),
        ]
    )

    private func samples() -> [String: String] {
        MetricsTestSupport.samples(factory)
    }

    @Test func recordedEventsAppearInTheExposition() {
        let metrics = ProxyMetrics(config: Self.config, registry: factory)
        let oauth = metrics.routes[1]
        oauth.answered(status: 200)
        oauth.answered(status: 204)
        oauth.answered(status: 503)
        oauth.upstreamFailed(.connectTimeout)
        oauth.tokenRenewed()
        oauth.tokenReplayed()
        oauth.upstreamCompleted(after: .milliseconds(7))
        metrics.routes[0].answered(status: 404)
        metrics.refused("no_route")
        metrics.refused("over_capacity")
        metrics.refused("over_capacity")
        metrics.openConnections[1].increment()
        metrics.openConnections[1].increment()
        metrics.openConnections[1].decrement()

        let samples = samples()
        #expect(samples[#"latchkey_requests_total{route="oauth",status_class="2xx"}"#] == "2")
        #expect(samples[#"latchkey_requests_total{route="oauth",status_class="5xx"}"#] == "1")
        #expect(samples[#"latchkey_requests_total{route="oauth",status_class="4xx"}"#] == "0")
        #expect(samples[#"latchkey_requests_total{route="static",status_class="4xx"}"#] == "1")
        #expect(samples[#"latchkey_upstream_failures_total{route="oauth",kind="connect_timeout"}"#] == "1")
        #expect(samples[#"latchkey_upstream_failures_total{route="oauth",kind="first_byte_timeout"}"#] == "0")
        #expect(samples[#"latchkey_token_renewals_total{route="oauth"}"#] == "1")
        #expect(samples[#"latchkey_token_replays_total{route="oauth"}"#] == "1")
        #expect(samples[#"latchkey_refused_requests_total{reason="no_route"}"#] == "1")
        #expect(samples[#"latchkey_refused_requests_total{reason="over_capacity"}"#] == "2")
        #expect(samples[#"latchkey_refused_requests_total{reason="cross_site"}"#] == "0")
        #expect(samples[#"latchkey_open_connections{listener="pod"}"#] == "1.0")
        #expect(samples[#"latchkey_open_connections{listener="main"}"#] == "0.0")
        #expect(samples[#"latchkey_upstream_duration_seconds_bucket{route="oauth",le="0.005"}"#] == "0")
        #expect(samples[#"latchkey_upstream_duration_seconds_bucket{route="oauth",le="0.01"}"#] == "1")
        #expect(samples[#"latchkey_upstream_duration_seconds_count{route="oauth"}"#] == "1")
        #expect(samples[#"latchkey_upstream_duration_seconds_sum{route="oauth"}"#] == "0.007")
        // Token renewal is counted only where an identity's token is injected.
        #expect(samples[#"latchkey_token_renewals_total{route="static"}"#] == nil)
    }

    @Test func everySeriesIsExportedFromZeroBeforeAnyEvent() {
        _ = ProxyMetrics(config: Self.config, registry: factory)
        let samples = samples()
        for route in ["static", "oauth"] {
            for statusClass in RouteMetrics.statusClasses {
                #expect(samples[#"latchkey_requests_total{route="\#(route)",status_class="\#(statusClass)"}"#] == "0")
            }
            for code in UpstreamError.Code.allCases {
                #expect(samples[#"latchkey_upstream_failures_total{route="\#(route)",kind="\#(code.metricLabel)"}"#] == "0")
            }
        }
        for reason in ProxyMetrics.refusalReasons {
            #expect(samples[#"latchkey_refused_requests_total{reason="\#(reason)"}"#] == "0")
        }
    }

    @Test func statusesOutsideTheFiveClassesAreNotCounted() {
        let metrics = ProxyMetrics(config: Self.config, registry: factory)
        metrics.routes[0].answered(status: 0)
        metrics.routes[0].answered(status: 99)
        metrics.routes[0].answered(status: 600)
        let counted = samples().filter { $0.key.hasPrefix("latchkey_requests_total") }
        #expect(counted.count == 10)
        #expect(counted.values.allSatisfy { $0 == "0" })
    }

    /// Route names are restricted by the configuration's validation, but an unnamed route
    /// is named after its path prefix: whatever a name holds, a label value is escaped as
    /// the text format requires (backslash, double quote, line feed).
    @Test func labelValuesAreEscaped() {
        let metrics = RouteMetrics.registered(route: "/a\"b\\c\nd", renewsTokens: false, in: factory)
        metrics.answered(status: 200)
        #expect(samples()[#"latchkey_requests_total{route="/a\"b\\c\nd",status_class="2xx"}"#] == "1")
    }

    @Test func theRequestPathAddsNoSeries() {
        let metrics = ProxyMetrics(config: Self.config, registry: factory)
        let before = samples().count
        for status in [200, 201, 302, 404, 502] {
            for _ in 0..<1000 { metrics.routes[1].answered(status: status) }
        }
        metrics.routes[1].upstreamFailed(.tls)
        metrics.routes[1].upstreamCompleted(after: .microseconds(300))
        metrics.refused("forbidden")
        metrics.openConnections[0].increment()
        let after = samples()
        #expect(after.count == before)
        #expect(after[#"latchkey_requests_total{route="oauth",status_class="2xx"}"#] == "2000")
        #expect(after[#"latchkey_upstream_failures_total{route="oauth",kind="tls"}"#] == "1")
    }
}
