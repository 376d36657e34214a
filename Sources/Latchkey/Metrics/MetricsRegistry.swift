import CoreMetrics
import Synchronization

/// Every series Latchkey makes through swift-metrics, by name and label set, for
/// `/.latchkey/metrics` to render (`MetricsRegistry+Exposition.swift`). Making a series
/// that exists returns that one: a reloaded configuration's routes keep their counts.
///
/// Latchkey's own rather than swift-prometheus 2.4.1's registry, which copies a family's
/// whole dictionary of series to add one: the twenty-odd series of each of N routes took
/// O(N²) to make, 250 s of start-up at 10,000 routes. Here a series is added in place, and
/// the many series of a route or an identity are one object, a group (`MetricGroup`).
public final class MetricsRegistry: MetricsFactory, Sendable {
    enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    struct Family: Sendable {
        let kind: Kind
        /// By rendered label set.
        var series: [String: any MetricSeries] = [:]
    }

    /// The groups of one type (`MetricGroup`), by key.
    struct GroupSet: Sendable {
        let families: [MetricFamily]
        var members: [String: any MetricGroup] = [:]
    }

    private struct State {
        var families: [String: Family] = [:]
        /// By the groups' type.
        var groups: [ObjectIdentifier: GroupSet] = [:]
    }

    private let state = Mutex(State())

    /// The upper bounds of every timer's histogram: swift-prometheus's defaults, which the
    /// dashboards built on Latchkey's `_bucket` series know.
    static let durationBounds: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    public init() {}

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        series(label, dimensions, .counter) { CounterSeries(name: label, labels: $0) }
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        series(label, dimensions, .gauge) { GaugeSeries(name: label, labels: $0) }
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        series(label, dimensions, .gauge) { GaugeSeries(name: label, labels: $0) }
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        series(label, dimensions, .histogram) { DurationHistogramSeries(name: label, labels: $0, bounds: Self.durationBounds) }
    }

    public func destroyCounter(_ handler: any CounterHandler) {
        remove(handler)
    }

    public func destroyMeter(_ handler: any MeterHandler) {
        remove(handler)
    }

    public func destroyRecorder(_ handler: any RecorderHandler) {
        remove(handler)
    }

    public func destroyTimer(_ handler: any TimerHandler) {
        remove(handler)
    }

    /// The series `name{dimensions}`, made by `make` if there is none yet. Its type must
    /// be the family's: one name with two types is a programming error.
    private func series<Series: MetricSeries>(_ name: String, _ dimensions: [(String, String)], _ kind: Kind,
                                make: (String) -> Series) -> Series {
        let labels = Self.render(dimensions)
        return state.withLock { state in
            // The family is looked up once and changed in place: each lookup hashed the
            // name, four times per series made, a tenth of starting with 10,000 routes.
            Self.series(in: &state.families[name, default: Family(kind: kind)], name, labels, kind, make: make)
        }
    }

    private static func series<Series: MetricSeries>(in family: inout Family, _ name: String, _ labels: String, _ kind: Kind,
                                                     make: (String) -> Series) -> Series {
        precondition(family.kind == kind, "metric \(name) made as a \(kind.rawValue) and as another type")
        if let existing = family.series[labels] {
            guard let existing = existing as? Series else { preconditionFailure("metric \(name) made with two types") }
            return existing
        }
        let made = make(labels)
        family.series[labels] = made
        return made
    }

    /// The series leaves the registry (when it is still the one registered under its labels).
    private func remove(_ handler: AnyObject) {
        guard let series = handler as? any MetricSeries else { return }
        state.withLock { state in
            guard let registered = state.families[series.name]?.series[series.labels], registered === series else { return }
            state.families[series.name]?.series[series.labels] = nil
            if state.families[series.name]?.series.isEmpty == true { state.families[series.name] = nil }
        }
    }

    /// The group of type `Group` under `key`, made by `make` if there is none yet: like a
    /// series, a reloaded configuration's route keeps its counts.
    func group<Group: MetricGroup>(_ key: String, make: () -> Group) -> Group {
        state.withLock { state in
            Self.group(in: &state.groups[ObjectIdentifier(Group.self), default: GroupSet(families: Group.families)], key, make: make)
        }
    }

    private static func group<Group: MetricGroup>(in set: inout GroupSet, _ key: String, make: () -> Group) -> Group {
        // One type per set: the cast finds the member there is.
        if let existing = set.members[key] as? Group { return existing }
        let made = make()
        set.members[key] = made
        return made
    }

    /// The group leaves the registry (when it is still the one under its key).
    func remove<Group: MetricGroup>(_ group: Group) {
        state.withLock { state in
            let type = ObjectIdentifier(Group.self)
            guard let registered = state.groups[type]?.members[group.key], registered === group else { return }
            state.groups[type]?.members[group.key] = nil
        }
    }

    /// The series and groups as they are now, for rendering outside the lock.
    var snapshot: (families: [String: Family], groups: [GroupSet]) {
        state.withLock { ($0.families, Array($0.groups.values)) }
    }

    /// `route="api",status_class="2xx"`: label values escaped as the text format says
    /// (backslash, double quote, line feed); names are Latchkey's own, valid as they are.
    /// Names and values are copied whole into bytes with room for them: appended to the
    /// bytes one by one, or to a string, each series' labels cost about twice as much, a
    /// tenth of starting with 10,000 routes.
    static func render(_ dimensions: [(String, String)]) -> String {
        var rendered: [UInt8] = []
        rendered.reserveCapacity(dimensions.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 })
        for (index, (name, value)) in dimensions.enumerated() {
            if index > 0 { rendered.append(UInt8(ascii: ",")) }
            rendered.append(contentsOf: name.utf8)
            rendered.append(contentsOf: #"=""#.utf8)
            if value.utf8.contains(where: { escaped($0) != nil }) {
                for byte in value.utf8 {
                    if let escape = escaped(byte) { rendered.append(contentsOf: escape.utf8) } else { rendered.append(byte) }
                }
            } else {
                rendered.append(contentsOf: value.utf8)
            }
            rendered.append(UInt8(ascii: "\""))
        }
        return String(decoding: rendered, as: UTF8.self)
    }

    /// What the text format writes for `byte` in a label value, if not the byte itself.
    private static func escaped(_ byte: UInt8) -> String? {
        switch byte {
        case UInt8(ascii: "\\"): #"\\"#
        case UInt8(ascii: "\""): #"\""#
        case UInt8(ascii: "\n"): #"\n"#
        default: nil
        }
    }
}
