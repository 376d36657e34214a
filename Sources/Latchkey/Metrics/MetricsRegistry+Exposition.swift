extension MetricsRegistry {
    /// Every series and group in the Prometheus text exposition format (version 0.0.4): a
    /// `# TYPE` line per family that has samples, then its samples. Families in name order;
    /// the samples of one family in no particular order, which the format allows.
    func exposition() -> [UInt8] {
        let (families, groups) = snapshot
        var kinds = families.mapValues(\.kind)
        /// Per family, the groups that write samples of it and the family's index in theirs.
        var groupsOfFamily: [String: [(index: Int, set: GroupSet)]] = [:]
        for set in groups where !set.members.isEmpty {
            for (index, family) in set.families.enumerated() {
                assert(kinds[family.name] ?? family.kind == family.kind, "metric \(family.name) of two types")
                kinds[family.name] = family.kind
                groupsOfFamily[family.name, default: []].append((index, set))
            }
        }
        var buffer: [UInt8] = []
        for (name, kind) in kinds.sorted(by: { $0.key < $1.key }) {
            let start = buffer.count
            buffer.append(contentsOf: "# TYPE \(name) \(kind.rawValue)\n".utf8)
            let samplesStart = buffer.count
            if let family = families[name] {
                for series in family.series.values { series.emit(into: &buffer) }
            }
            for (index, set) in groupsOfFamily[name] ?? [] {
                for group in set.members.values { group.emit(family: index, into: &buffer) }
            }
            // A group may have no samples of a family (a route that renews no token).
            if buffer.count == samplesStart { buffer.removeSubrange(start...) }
        }
        return buffer
    }
}
