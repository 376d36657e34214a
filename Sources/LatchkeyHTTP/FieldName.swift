/// The field names the codec and the proxy look up, recognised once, when a field is
/// stored: a lookup then compares one byte per field instead of a name's bytes ASCII
/// case-insensitively, which was about 90 comparisons per proxied request. Every other
/// name is `.other` and compared byte by byte. Fewer than 32 of them: a set of them is the
/// bits of a `UInt32` (`bit`).
@usableFromInline
enum FieldName: UInt8, Sendable, CaseIterable {
    case other
    case host
    case contentLength
    case transferEncoding
    case connection
    case expect
    case upgrade
    case te
    case trailer
    case keepAlive
    case proxyConnection
    case authorization
    case proxyAuthorization
    case cookie
    case setCookie
    case location
    case contentLocation
    case via
    case xForwardedFor
    case xForwardedProto
    case xForwardedHost
    case latchkeyIdentity
    case origin
    case secFetchSite

    /// The name of `bytes[range]`. The length decides which one or two comparisons to make.
    static func classify(_ bytes: UnsafeRawBufferPointer, _ name: Range<Int>) -> FieldName {
        @inline(__always)
        func named(_ lowercased: StaticString, _ known: FieldName) -> FieldName? {
            ASCII.equalsCaseInsensitive(bytes, name, lowercased) ? known : nil
        }
        switch name.count {
        case 2: return named("te", .te) ?? .other
        case 3: return named("via", .via) ?? .other
        case 4: return named("host", .host) ?? .other
        case 6: return named("cookie", .cookie) ?? named("expect", .expect) ?? named("origin", .origin) ?? .other
        case 7: return named("upgrade", .upgrade) ?? named("trailer", .trailer) ?? .other
        case 8: return named("location", .location) ?? .other
        case 10: return named("connection", .connection) ?? named("set-cookie", .setCookie) ?? named("keep-alive", .keepAlive) ?? .other
        case 13: return named("authorization", .authorization) ?? .other
        case 14: return named("content-length", .contentLength) ?? named("sec-fetch-site", .secFetchSite) ?? .other
        case 15: return named("x-forwarded-for", .xForwardedFor) ?? .other
        case 16: return named("content-location", .contentLocation) ?? named("x-forwarded-host", .xForwardedHost)
            ?? named("proxy-connection", .proxyConnection) ?? .other
        case 17: return named("transfer-encoding", .transferEncoding) ?? named("x-forwarded-proto", .xForwardedProto)
            ?? named("latchkey-identity", .latchkeyIdentity) ?? .other
        case 19: return named("proxy-authorization", .proxyAuthorization) ?? .other
        default: return .other
        }
    }

    static func classify(_ bytes: UnsafeRawBufferPointer) -> FieldName {
        classify(bytes, 0..<bytes.count)
    }

    /// The name's bit in a set of names (`HTTPFields.NameSet`, `HTTPFields.knownNames`).
    @inlinable
    var bit: UInt32 { 1 &<< UInt32(rawValue) }

    /// RFC 9110 §7.6.1: the fields that describe one connection, removed by every proxy
    /// whether or not `Connection` names them.
    var isAlwaysHopByHop: Bool {
        Self.alwaysHopByHop & bit != 0
    }

    static var alwaysHopByHop: UInt32 {
        connection.bit | keepAlive.bit | proxyConnection.bit | te.bit | trailer.bit | transferEncoding.bit | upgrade.bit
    }
}
