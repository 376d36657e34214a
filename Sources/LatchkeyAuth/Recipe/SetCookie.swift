#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyHTTP

/// The cookie one `Set-Cookie` field sets, read as RFC 6265 §5.2 says a user agent reads
/// it: the name and value before the first `;`, split at the first `=` and trimmed; a
/// line without `=` or with an empty name sets nothing. Of the attributes only those
/// that remove the cookie matter here.
struct SetCookie: Sendable, Equatable {
    var name: String
    var value: String
    /// `Max-Age` of zero or less, or an `Expires` in the past (§5.2.1, §5.2.2): the server
    /// deletes the cookie rather than sets it.
    var removes: Bool

    init?(_ field: String, now: Date) {
        let parts = field.split(separator: ";", omittingEmptySubsequences: false)
        guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { return nil }
        name = Self.trimmed(pair[..<equals])
        value = Self.trimmed(pair[pair.index(after: equals)...])
        guard !name.isEmpty else { return nil }
        var maxAge: Int?
        var expired = false
        for attribute in parts.dropFirst() {
            let equals = attribute.firstIndex(of: "=") ?? attribute.endIndex
            let key = Self.trimmed(attribute[..<equals]).lowercased()
            let argument = equals < attribute.endIndex ? Self.trimmed(attribute[attribute.index(after: equals)...]) : ""
            switch key {
            case "max-age": if let seconds = Int(argument) { maxAge = seconds }
            case "expires": if let date = HTTPDate.parse(argument, now: now) { expired = date <= now }
            default: break
            }
        }
        // §5.3 step 3: Max-Age wins over Expires.
        removes = maxAge.map { $0 <= 0 } ?? expired
    }

    /// §5.2: spaces and horizontal tabs around the name, value and attributes go.
    private static func trimmed(_ text: Substring) -> String {
        String(text.trimmingSpaces())
    }

    /// The value the answer's `Set-Cookie` fields leave cookie `name` with: the last one
    /// that sets it (a later field replaces an earlier one); nil when none does, or the
    /// last one removes it.
    static func value(named name: String, in fields: HTTPFields, now: Date) -> String? {
        let cookie = fields.values(named: .setCookie).compactMap { SetCookie($0, now: now) }.last { $0.name == name }
        guard let cookie, !cookie.removes else { return nil }
        return cookie.value
    }
}
