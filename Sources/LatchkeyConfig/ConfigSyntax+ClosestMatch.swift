extension ConfigSyntax {
    /// The known name nearest to a mistyped one, if it is close enough to be a typo.
    static func closestMatch(to name: String, in candidates: [String]) -> String? {
        let lowered = Array(name.lowercased().utf8)
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, Array(candidate.utf8))
            if distance <= max(1, candidate.utf8.count / 3), distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.name
    }

    /// Levenshtein distance: insertions, deletions and substitutions of one byte.
    private static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
