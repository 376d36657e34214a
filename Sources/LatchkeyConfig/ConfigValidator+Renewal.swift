extension ConfigValidator {
    /// When a route renews its identity's token and replays the request: `renew_on` lists
    /// statuses, and statuses whose JSON body must hold some fields (TMDB's 401 with
    /// `status_code` 3, an invalid session, unlike its 401 with 7, an invalid API key).
    mutating func validateRenewal(_ raw: ConfigMapping) -> RenewalPolicy {
        let path = raw.path
        var renewal = RenewalPolicy()
        if let entries = raw.list("renew_on") {
            renewal.statuses = []
            // The index of each status's first entry, plain or with a body match.
            var plain: [Int: Int] = [:], matched: [Int: Int] = [:]
            for (index, entry) in entries.enumerated() {
                if case .mapping = entry.content {
                    guard let match = validateRenewalBodyMatch(entry) else { continue }
                    renewal.bodyMatches.append(match)
                    matched[match.status] = matched[match.status] ?? index
                } else if let status = entry.int(), checkRenewalStatus(status, at: entry.path) {
                    renewal.statuses.insert(status)
                    plain[status] = plain[status] ?? index
                }
            }
            // A plain status renews on every such answer: a body match beside it would decide nothing.
            for (status, plainIndex) in plain.sorted(by: { $0.key < $1.key }) {
                guard let matchIndex = matched[status] else { continue }
                let later = matchIndex > plainIndex ? entries[matchIndex].path / "status" : entries[plainIndex].path
                diagnostics.error(later, "\(status) is listed alone and with a body match",
                                  expected: "either \(status), which renews on every \(status), or { status: \(status), json: … }")
            }
        }
        if let invalidToken = raw.bool("renew_on_invalid_token") { renewal.onInvalidTokenChallenge = invalidToken }
        if let limit = raw.byteSize("replay_limit") {
            if limit <= UInt64(Int32.max) {
                renewal.replayLimit = Int(limit)
            } else {
                diagnostics.error(path / "replay_limit", "out of range", expected: "a size up to 2GiB")
            }
        }
        return renewal
    }

    /// `{ status: 401, json: { status_code: 3 } }`.
    private mutating func validateRenewalBodyMatch(_ node: ConfigNode) -> RenewalBodyMatch? {
        guard let raw = node.mapping(ConfigKeys.renewOn, expected: "a status, or a mapping with status and json") else { return nil }
        guard let status = raw.int("status") else {
            if raw.node("status") == nil { diagnostics.error(node.path, "missing key 'status'", expected: "the status whose body is looked into, such as 401") }
            return nil
        }
        guard let json = raw.node("json") else {
            diagnostics.error(node.path, "missing key 'json'", expected: "the JSON fields the body must hold; a plain \(status) otherwise")
            return nil
        }
        guard let fields = json.jsonFieldMatches() else { return nil }
        if case .mapping(let mapping) = json.content, mapping.isEmpty {
            diagnostics.error(json.path, "no fields", expected: "the JSON fields the body must hold, such as status_code: 3")
        }
        return checkRenewalStatus(status, at: node.path / "status") ? RenewalBodyMatch(status: status, fields: fields) : nil
    }

    private mutating func checkRenewalStatus(_ status: Int, at path: ConfigPath) -> Bool {
        guard (400...599).contains(status) else {
            diagnostics.error(path, "not an error status", expected: "a status from 400 to 599, such as 401")
            return false
        }
        return true
    }
}
