import CoreMetrics
import LatchkeyConfig
import Testing
@testable import Latchkey

/// The series after a configuration reload: the same series for the routes both have, none
/// for the routes that are gone.
extension ProxyMetricsTests {
    @Test func aReloadKeepsTheCountsOfItsRoutesAndDropsTheSeriesOfTheOthers() {
        let factory = MetricsRegistry()
        let running = ProxyMetrics(config: Self.config, factory: factory)
        running.routes[0].answered(status: 200)
        running.routes[1].tokenRenewals?.increment()
        // `oauth` is gone, `static` stays, and `static` injects no identity either way.
        var reloaded = Self.config
        reloaded.routes = [reloaded.routes[0], RouteConfig(name: "web", upstream: UpstreamConfig(url: "http://web.example"))]
        let next = ProxyMetrics(config: reloaded, factory: factory)
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
        let running = ProxyMetrics(config: Self.config, factory: factory)
        var reloaded = Self.config
        reloaded.routes[1].injections = []
        running.retire(replacedBy: ProxyMetrics(config: reloaded, factory: factory))

        let samples = MetricsTestSupport.samples(factory)
        #expect(samples[#"latchkey_requests_total{route="oauth",status_class="2xx"}"#] == "0")
        #expect(samples[#"latchkey_token_renewals_total{route="oauth"}"#] == nil)
        #expect(samples[#"latchkey_token_replays_total{route="oauth"}"#] == nil)
    }
}
