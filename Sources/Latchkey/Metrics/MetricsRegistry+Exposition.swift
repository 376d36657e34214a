extension MetricsRegistry {
    /// Every series in the Prometheus text exposition format (version 0.0.4): a `# TYPE`
    /// line per family, then its samples. Families in name order; the series of one family in
    /// no particular order, which the format allows.
    func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        for (name, family) in snapshot.sorted(by: { $0.key < $1.key }) {
            buffer.append(contentsOf: "# TYPE \(name) \(family.kind.rawValue)\n".utf8)
            for series in family.series.values { series.emit(into: &buffer) }
        }
        return buffer
    }
}
