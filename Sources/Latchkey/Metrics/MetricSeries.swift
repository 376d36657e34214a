import CoreMetrics
import Synchronization

/// One series of `MetricsRegistry`: a name, a label set rendered once as the exposition
/// writes it (`route="api",status_class="2xx"`, which also keys it in its family), and a
/// value that loops update without a lock where an atomic suffices.
protocol MetricSeries: AnyObject, Sendable {
    var name: String { get }
    var labels: String { get }
    /// The series' sample lines, in the Prometheus text format.
    func emit(into buffer: inout [UInt8])
}

extension MetricSeries {
    /// `name{labels} `, with `suffix` after the name and `extra` after the labels (a
    /// histogram's `le`).
    func appendSampleStart(_ buffer: inout [UInt8], suffix: String = "", extra: String = "") {
        MetricSample.appendStart(&buffer, name: name, suffix: suffix, labels: labels, extra: extra)
    }
}

/// A counter: an integer that only grows (swift-metrics' floating-point counters
/// accumulate into it).
final class CounterSeries: MetricSeries, CounterHandler {
    let name: String
    let labels: String
    private let value = Atomic<Int64>(0)

    init(name: String, labels: String) {
        self.name = name
        self.labels = labels
    }

    func increment(by amount: Int64) {
        value.wrappingAdd(amount, ordering: .relaxed)
    }

    func reset() {
        value.store(0, ordering: .relaxed)
    }

    func emit(into buffer: inout [UInt8]) {
        MetricSample.append(&buffer, name: name, labels: labels, count: value.load(ordering: .relaxed))
    }
}

/// A gauge: a value set or moved either way (swift-metrics' meters; its recorders report
/// their last value, which Latchkey, making none, never relies on).
final class GaugeSeries: MetricSeries, MeterHandler, RecorderHandler {
    let name: String
    let labels: String
    /// The Double's bits: there is no atomic Double.
    private let bits = Atomic<UInt64>(Double.zero.bitPattern)

    init(name: String, labels: String) {
        self.name = name
        self.labels = labels
    }

    func set(_ value: Double) {
        bits.store(value.bitPattern, ordering: .relaxed)
    }

    func set(_ value: Int64) {
        set(Double(value))
    }

    func record(_ value: Int64) {
        set(Double(value))
    }

    func record(_ value: Double) {
        set(value)
    }

    func increment(by amount: Double) {
        var current = bits.load(ordering: .relaxed)
        while true {
            let (exchanged, found) = bits.compareExchange(expected: current, desired: (Double(bitPattern: current) + amount).bitPattern,
                                                          ordering: .relaxed)
            if exchanged { return }
            current = found
        }
    }

    func decrement(by amount: Double) {
        increment(by: -amount)
    }

    func emit(into buffer: inout [UInt8]) {
        MetricSample.append(&buffer, name: name, labels: labels, gauge: Double(bitPattern: bits.load(ordering: .relaxed)))
    }
}

/// A histogram of durations (swift-metrics' timers): a count per upper bound (each
/// counting every duration up to it), their sum and their count.
///
/// Recorded on every request, so a recording touches one bucket, found by comparing
/// nanoseconds: the counts are made cumulative when the exposition is written, which
/// happens once per scrape.
final class DurationHistogramSeries: MetricSeries, TimerHandler {
    let name: String
    let labels: String
    private let bounds: [Duration]
    private let boundNanoseconds: [Int64]
    private let state: Mutex<State>

    private struct State {
        /// Per bound, the durations above the bound before it and up to this one; those
        /// above every bound are only in `count`.
        var counts: [Int]
        var sum = Duration.zero
        var count = 0
    }

    init(name: String, labels: String, bounds: [Duration]) {
        self.name = name
        self.labels = labels
        self.bounds = bounds
        boundNanoseconds = bounds.map { $0.components.seconds * 1_000_000_000 + $0.components.attoseconds / 1_000_000_000 }
        state = Mutex(State(counts: Array(repeating: 0, count: bounds.count)))
    }

    func recordNanoseconds(_ duration: Int64) {
        let bucket = boundNanoseconds.firstIndex { duration <= $0 }
        state.withLock { state in
            if let bucket { state.counts[bucket] += 1 }
            state.sum += .nanoseconds(duration)
            state.count += 1
        }
    }

    func emit(into buffer: inout [UInt8]) {
        let state = state.withLock { $0 }
        var cumulative = 0
        for (bound, count) in zip(bounds, state.counts) {
            cumulative += count
            appendSampleStart(&buffer, suffix: "_bucket", extra: #"le=""# + bound.exposition + #"""#)
            buffer.append(contentsOf: String(cumulative).utf8)
            buffer.append(UInt8(ascii: "\n"))
        }
        appendSampleStart(&buffer, suffix: "_bucket", extra: #"le="+Inf""#)
        buffer.append(contentsOf: String(state.count).utf8)
        buffer.append(UInt8(ascii: "\n"))
        appendSampleStart(&buffer, suffix: "_sum")
        buffer.append(contentsOf: state.sum.exposition.utf8)
        buffer.append(UInt8(ascii: "\n"))
        appendSampleStart(&buffer, suffix: "_count")
        buffer.append(contentsOf: String(state.count).utf8)
        buffer.append(UInt8(ascii: "\n"))
    }
}

extension Duration {
    /// Seconds as the exposition writes them: "0.005", "2.5", "10.0".
    var exposition: String {
        let (seconds, attoseconds) = components
        guard attoseconds != 0 else { return "\(seconds).0" }
        var fraction = String(attoseconds)
        fraction = String(repeating: "0", count: 18 - fraction.count) + fraction
        while fraction.last == "0" { fraction.removeLast() }
        return "\(seconds).\(fraction)"
    }
}
