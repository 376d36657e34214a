import CoreMetrics
import LatchkeyConfig
import Testing
@testable import Latchkey

/// The series after a configuration reload: the same series for the routes both have, none
/// for the routes that are gone.
extension ProxyMetricsTests {
    @Test func aReloadKeepsTheCountsOfItsRoutesAndDropsTheSeriesOfTheOthers() {
        let factory = MetricsRegistry()
        let running = ProxyMetrics(config: Self.config, registry: factory)
        running.routes[0].answered(status: 200)
        running.routes[1].tokenRenewed()
        // `oauth` is gone, `static` stays, and `static` injects no identity either way.
        var reloaded = Self.config
        reloaded.routes = [reloaded.routes[0], RouteConfig(name: "web", upstream: UpstreamConfig(url: "http://web.example"))]
        let next = ProxyMetrics(config: reloaded, registry: factory)
        running.retire(replacedBy: next)
        // A request that started before the reload ends on the running series: the same one.
        running.routes[0].answered(status: 200)

        let samples = MetricsTestSupport.samples(factory)
        #expect(samples[#"latchkey_requests_total{route="static",status_class="2xx"}"#] == "2")
        #expect(samples[#"latchkey_requests_total{route="web",status_class="2xx"}"#] == "0")
        #expect(!samples.keys.contains { $0.contains(#"route="oauth""#) })
    }

    @Test func aRouteThatNoLongerInjectsAnIdentityLosesItsRenewalSeries() {
        let factory = MetricsRegistry()
        let running = ProxyMetrics(config: Self.config, registry: factory)
        var reloaded = Self.config
        reloaded.routes[1].injections = []
        running.retire(replacedBy: ProxyMetrics(config: reloaded, registry: factory))

        let samples = MetricsTestSupport.samples(factory)
        #expect(samples[#"latchkey_requests_total{route="oauth",status_class="2xx"}"#] == "0")
        #expect(samples[#"latchkey_token_renewals_total{route="oauth"}"#] == nil)
        #expect(samples[#"latchkey_token_replays_total{route="oauth"}"#] == nil)
    }

    /// The renewal series come with the configuration that injects the token: not while
    /// it is only being prepared (a reload that fails after making its metrics changes
    /// nothing), and from 0.
    @Test func aRouteThatComesToInjectAnIdentityGetsItsRenewalSeriesWhenTheReloadRuns() {
        let factory = MetricsRegistry()
        var plain = Self.config
        plain.routes[1].injections = []
        let running = ProxyMetrics(config: plain, registry: factory)
        let next = ProxyMetrics(config: Self.config, registry: factory)
        #expect(MetricsTestSupport.samples(factory)[#"latchkey_token_renewals_total{route="oauth"}"#] == nil)
        running.retire(replacedBy: next)
        next.routes[1].tokenRenewed()

        let samples = MetricsTestSupport.samples(factory)
        #expect(samples[#"latchkey_token_renewals_total{route="oauth"}"#] == "1")
        #expect(samples[#"latchkey_token_replays_total{route="oauth"}"#] == "0")
    }
}
