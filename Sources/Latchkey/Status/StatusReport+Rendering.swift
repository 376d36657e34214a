#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// `latchkey status` as tables for people, or as JSON (`--json`) for scripts. Times are
// UTC in ISO 8601; the tables add how far away they are.
extension StatusReport {
    public func text(now: Date) -> String {
        // The captures' column only where a recipe identity has something to show in it.
        let showsCaptures = identities.contains { $0.captures != nil }
        var identityRows: [[String]] = []
        for identity in identities {
            var row = [
                identity.name, identity.grant, identity.source.rawValue, identity.state.words,
                identity.expiresAt.map { Self.time($0) + " (" + Self.distance(from: now, to: $0) + ")" } ?? "-",
                identity.obtainedAt.map(Self.time) ?? "-",
                identity.obtainedAt == nil ? "-" : identity.hasRefreshToken ? "yes" : "no",
            ]
            if showsCaptures { row.append(identity.captures.flatMap { $0.isEmpty ? nil : $0.joined(separator: ", ") } ?? "-") }
            identityRows.append(row + [identity.detail ?? ""])
        }
        let header = ["IDENTITY", "GRANT", "TOKEN", "STATE", "EXPIRES", "OBTAINED", "REFRESH TOKEN"] + (showsCaptures ? ["CAPTURES"] : [])
        var text = TextTable(header: header + ["NOTE"], rows: identityRows).text
        if identities.isEmpty { text = "no identities\n" }
        if !routes.isEmpty {
            let routeRows = routes.map { route in
                [route.name, route.identity, route.configured, route.allowed.joined(separator: ", "), route.detail ?? ""]
            }
            text += "\n" + TextTable(header: ["ROUTE", "IDENTITY", "CONFIGURED", "ALLOWED", "NOTE"], rows: routeRows).text
        }
        return text
    }

    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        // Every member is a string, a boolean, a date or a list of those: encoding cannot fail.
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self) + "\n"
    }

    static func time(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// "in 59m", "3h ago": the largest unit, rounded down.
    static func distance(from now: Date, to date: Date) -> String {
        let seconds = Int(date.timeIntervalSince(now))
        let size = abs(seconds)
        let amount = switch size {
        case ..<60: "\(size)s"
        case ..<3600: "\(size / 60)m"
        case ..<86400: "\(size / 3600)h"
        default: "\(size / 86400)d"
        }
        return seconds >= 0 ? "in " + amount : amount + " ago"
    }
}

extension IdentityStatus.State {
    /// The state as the table shows it.
    var words: String { rawValue.replacingOccurrences(of: "_", with: " ") }
}

extension StatusReport: Encodable {
    enum CodingKeys: String, CodingKey {
        case identities, routes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identities, forKey: .identities)
        try container.encode(routes, forKey: .routes)
    }
}

extension IdentityStatus: Encodable {
    enum CodingKeys: String, CodingKey {
        case name, grant, source, state, expires_at, obtained_at, refresh_token, captures, detail, last_error
    }

    enum LastErrorKeys: String, CodingKey {
        case message, config_key, at
    }

    /// Every key always, null where there is nothing: a script reads one shape.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(grant, forKey: .grant)
        try container.encode(source.rawValue, forKey: .source)
        try container.encode(state.rawValue, forKey: .state)
        try container.encode(expiresAt, forKey: .expires_at)
        try container.encode(obtainedAt, forKey: .obtained_at)
        try container.encode(source == .static ? nil : hasRefreshToken, forKey: .refresh_token)
        try container.encode(captures, forKey: .captures)
        try container.encode(detail, forKey: .detail)
        guard let lastError else { return try container.encodeNil(forKey: .last_error) }
        var failure = container.nestedContainer(keyedBy: LastErrorKeys.self, forKey: .last_error)
        try failure.encode(lastError.message, forKey: .message)
        try failure.encode(lastError.configKey, forKey: .config_key)
        try failure.encode(lastError.at, forKey: .at)
    }
}

extension RouteStatus: Encodable {
    enum CodingKeys: String, CodingKey {
        case name, identity, configured, allowed, detail
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(identity, forKey: .identity)
        try container.encode(configured, forKey: .configured)
        try container.encode(allowed, forKey: .allowed)
        try container.encode(detail, forKey: .detail)
    }
}

/// Columns padded to their widest cell, two spaces apart; trailing blanks trimmed.
struct TextTable {
    let header: [String]
    let rows: [[String]]

    var text: String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            var line = ""
            for (column, cell) in row.enumerated() {
                line += cell + String(repeating: " ", count: widths[column] - cell.count + 2)
            }
            while line.last == " " { line.removeLast() }
            return line + "\n"
        }.joined()
    }
}
