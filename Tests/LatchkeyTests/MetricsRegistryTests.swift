import CoreMetrics
import Synchronization
import Testing
@testable import Latchkey

@Suite struct MetricsRegistryTests {
    private let registry = MetricsRegistry()

    private var text: String {
        String(decoding: registry.exposition(), as: UTF8.self)
    }

    @Test func countersGaugesAndHistogramsInTheTextFormat() {
        Counter(label: "lk_requests_total", dimensions: [("route", "api")], factory: registry).increment(by: 3)
        Meter(label: "lk_open", dimensions: [], factory: registry).set(2)
        let timer = CoreMetrics.Timer(label: "lk_duration_seconds", dimensions: [("route", "api")], factory: registry)
        timer.recordNanoseconds(7_000_000)
        timer.recordNanoseconds(10_000_000) // on a bound: counted in it
        timer.recordNanoseconds(3_000_000_000)
        timer.recordNanoseconds(20_000_000_000) // above every bound: in +Inf alone
        #expect(text == """
            # TYPE lk_duration_seconds histogram
            lk_duration_seconds_bucket{route="api",le="0.005"} 0
            lk_duration_seconds_bucket{route="api",le="0.01"} 2
            lk_duration_seconds_bucket{route="api",le="0.025"} 2
            lk_duration_seconds_bucket{route="api",le="0.05"} 2
            lk_duration_seconds_bucket{route="api",le="0.1"} 2
            lk_duration_seconds_bucket{route="api",le="0.25"} 2
            lk_duration_seconds_bucket{route="api",le="0.5"} 2
            lk_duration_seconds_bucket{route="api",le="1.0"} 2
            lk_duration_seconds_bucket{route="api",le="2.5"} 2
            lk_duration_seconds_bucket{route="api",le="5.0"} 3
            lk_duration_seconds_bucket{route="api",le="10.0"} 3
            lk_duration_seconds_bucket{route="api",le="+Inf"} 4
            lk_duration_seconds_sum{route="api"} 23.017
            lk_duration_seconds_count{route="api"} 4
            # TYPE lk_open gauge
            lk_open 2.0
            # TYPE lk_requests_total counter
            lk_requests_total{route="api"} 3

            """)
    }

    /// A reloaded configuration makes its routes' series again: they are the running ones.
    @Test func makingASeriesAgainReturnsTheOneThatExists() {
        Counter(label: "lk_total", dimensions: [("route", "api")], factory: registry).increment()
        Counter(label: "lk_total", dimensions: [("route", "api")], factory: registry).increment()
        #expect(text.contains(#"lk_total{route="api"} 2"#))
    }

    @Test func aDestroyedSeriesLeavesAndItsEmptyFamilyWithIt() {
        let kept = Counter(label: "lk_total", dimensions: [("route", "kept")], factory: registry)
        let gone = Counter(label: "lk_total", dimensions: [("route", "gone")], factory: registry)
        let alone = Meter(label: "lk_alone", dimensions: [], factory: registry)
        gone.destroy()
        alone.destroy()
        kept.increment()
        #expect(text == "# TYPE lk_total counter\nlk_total{route=\"kept\"} 1\n")
    }

    @Test func aGaugeMovesBothWays() {
        let meter = Meter(label: "lk_open", dimensions: [("listener", "main")], factory: registry)
        meter.increment(by: 3)
        meter.decrement(by: 1)
        #expect(text.contains(#"lk_open{listener="main"} 2.0"#))
    }

    /// A group's samples go under their family's one `# TYPE` line, beside the series made
    /// one by one under the same name; a family of which no group has samples has no line.
    @Test func groupsWriteTheirSamplesUnderTheirFamilies() {
        Counter(label: "lk_total", dimensions: [("route", "single")], factory: registry).increment()
        let pair = registry.group("pair") { PairGroup(key: "pair") }
        pair.count.add(4, ordering: .relaxed)
        #expect(registry.group("pair") { PairGroup(key: "pair") } === pair)
        #expect(text == """
            # TYPE lk_total counter
            lk_total{route="single"} 1
            lk_total{route="pair",half="first"} 4
            lk_total{route="pair",half="second"} 4

            """)
    }

    @Test func aRemovedGroupLeavesAndAGroupMadeAgainStartsFromZero() {
        let gone = registry.group("gone") { PairGroup(key: "gone") }
        gone.count.add(2, ordering: .relaxed)
        registry.remove(gone)
        #expect(text.isEmpty)
        let again = registry.group("gone") { PairGroup(key: "gone") }
        #expect(again !== gone)
        #expect(text.contains(#"lk_total{route="gone",half="first"} 0"#))
    }
}

/// A group of two samples of `lk_total`, both of one count, and none of `lk_empty_total`.
private final class PairGroup: MetricGroup {
    static let families = [MetricFamily(name: "lk_total", kind: .counter), MetricFamily(name: "lk_empty_total", kind: .counter)]
    let key: String
    let count = Atomic<Int64>(0)

    init(key: String) {
        self.key = key
    }

    func emit(family: Int, into buffer: inout [UInt8]) {
        guard family == 0 else { return }
        for half in ["first", "second"] {
            MetricSample.append(&buffer, name: "lk_total", labels: #"route=""# + key + #"""#, extra: #"half=""# + half + #"""#,
                                count: count.load(ordering: .relaxed))
        }
    }
}
