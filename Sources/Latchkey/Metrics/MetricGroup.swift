/// Series that belong together (a route's, an identity's), kept by one object that counts
/// them and writes their samples itself: made in one step instead of one series at a time,
/// which at 10,000 routes, with some twenty series each, was a quarter of start-up.
/// `MetricsRegistry` holds the groups by type and key and writes their samples under their
/// families' `# TYPE` lines.
protocol MetricGroup: AnyObject, Sendable {
    /// The families a group of this type writes samples of; `emit(family:into:)` takes an
    /// index into them.
    static var families: [MetricFamily] { get }
    /// What the group is kept under in the registry among its type's (the route's name).
    var key: String { get }
    /// Its sample lines of `Self.families[family]`, in the Prometheus text format.
    func emit(family: Int, into buffer: inout [UInt8])
}

/// A family's name and type, for its `# TYPE` line.
struct MetricFamily: Sendable {
    let name: String
    let kind: MetricsRegistry.Kind
}

/// Sample lines of the text format, written straight into the exposition's bytes.
enum MetricSample {
    /// `name{labels} ` (or `name ` without labels), with `suffix` after the name and
    /// `extra` after the labels (a histogram's `le`, a group's own label).
    static func appendStart(_ buffer: inout [UInt8], name: String, suffix: String = "", labels: String, extra: String = "") {
        buffer.append(contentsOf: name.utf8)
        buffer.append(contentsOf: suffix.utf8)
        if !labels.isEmpty || !extra.isEmpty {
            buffer.append(UInt8(ascii: "{"))
            buffer.append(contentsOf: labels.utf8)
            if !labels.isEmpty, !extra.isEmpty { buffer.append(UInt8(ascii: ",")) }
            buffer.append(contentsOf: extra.utf8)
            buffer.append(UInt8(ascii: "}"))
        }
        buffer.append(UInt8(ascii: " "))
    }

    /// One counter's whole line.
    static func append(_ buffer: inout [UInt8], name: String, labels: String, extra: String = "", count: Int64) {
        appendStart(&buffer, name: name, labels: labels, extra: extra)
        buffer.append(contentsOf: String(count).utf8)
        buffer.append(UInt8(ascii: "\n"))
    }

    /// One gauge's whole line: swift-metrics' meters are floating point, and the exposition
    /// writes every gauge as one ("2.0").
    static func append(_ buffer: inout [UInt8], name: String, labels: String, extra: String = "", gauge: Double) {
        appendStart(&buffer, name: name, labels: labels, extra: extra)
        buffer.append(contentsOf: gauge.description.utf8)
        buffer.append(UInt8(ascii: "\n"))
    }
}
