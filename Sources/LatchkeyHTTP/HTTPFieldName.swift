extension HTTPField {
    /// A field name to look up in `HTTPFields`, recognised once: a literal (`"X-Request-Id"`)
    /// or `Name(string)` is classified when it is made, and the constants below not at
    /// all, so a lookup of a known name compares one byte per field. Spelling is kept for
    /// the fields it names when stored (`set`).
    public struct Name: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
        public let text: String
        let known: FieldName

        public init(_ text: String) {
            var bytes = text
            self.text = text
            known = bytes.withUTF8 { FieldName.classify(UnsafeRawBufferPointer($0)) }
        }

        public init(stringLiteral text: String) {
            self.init(text)
        }

        /// A name whose class is known where it is written.
        private init(_ text: String, _ known: FieldName) {
            self.text = text
            self.known = known
        }

        public var description: String { text }

        /// Names compare as fields do: ASCII case-insensitively.
        public static func == (lhs: Name, rhs: Name) -> Bool {
            lhs.known == rhs.known && (lhs.known != .other || ASCII.equalsCaseInsensitive(lhs.text, rhs.text))
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(known)
            if known == .other { hasher.combine(text.lowercased()) }
        }

        public static var host: Name { Name("Host", .host) }
        public static var contentLength: Name { Name("Content-Length", .contentLength) }
        public static var transferEncoding: Name { Name("Transfer-Encoding", .transferEncoding) }
        public static var connection: Name { Name("Connection", .connection) }
        public static var expect: Name { Name("Expect", .expect) }
        public static var upgrade: Name { Name("Upgrade", .upgrade) }
        public static var authorization: Name { Name("Authorization", .authorization) }
        public static var proxyAuthorization: Name { Name("Proxy-Authorization", .proxyAuthorization) }
        public static var cookie: Name { Name("Cookie", .cookie) }
        public static var setCookie: Name { Name("Set-Cookie", .setCookie) }
        public static var location: Name { Name("Location", .location) }
        public static var contentLocation: Name { Name("Content-Location", .contentLocation) }
        public static var via: Name { Name("Via", .via) }
        public static var xForwardedFor: Name { Name("X-Forwarded-For", .xForwardedFor) }
        public static var xForwardedProto: Name { Name("X-Forwarded-Proto", .xForwardedProto) }
        public static var xForwardedHost: Name { Name("X-Forwarded-Host", .xForwardedHost) }
        public static var latchkeyIdentity: Name { Name("Latchkey-Identity", .latchkeyIdentity) }
        public static var origin: Name { Name("Origin", .origin) }
        public static var secFetchSite: Name { Name("Sec-Fetch-Site", .secFetchSite) }
    }
}

extension HTTPField.Name {
    /// The name's bytes and class, for the lookups of `HTTPFields`.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer, FieldName) throws -> Result) rethrows -> Result {
        var text = text
        return try text.withUTF8 { try body(UnsafeRawBufferPointer($0), known) }
    }
}
