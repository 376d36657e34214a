#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyHTTP

/// The cookies by which the proxy remembers handoffs in the browser itself, so that it
/// keeps no per-browser state:
///
/// - `latchkey_handoff` (the guard): set with the handoff's redirect, signed, naming the
///   route and the page, valid for a minute. A page that still answers 401 while the
///   browser presents it had its handoff already: the browser gets an error page instead
///   of a second handoff, so a session the app will not accept can never loop.
/// - `latchkey_handed_off`: set by every handoff on a route with `before_first_page`, for
///   the browser session; a navigation without it gets its handoff before the page.
///
/// Both are HttpOnly, SameSite=Lax (the redirect back is same-site), Secure on a TLS
/// listener (`secure`) and scoped to the route's prefix; neither ever reaches the upstream
/// (CookieHeader.removeProxyCookies).
struct HandoffMarks: Sendable {
    static let guardName = "latchkey_handoff"
    static let handedOffName = "latchkey_handed_off"
    /// Long enough for a slow page load after the redirect; short enough that a session
    /// that expires later gets a new handoff.
    static let guardLifetime = 60

    /// A key of this process: a guard is only needed for the seconds of one navigation.
    let signer: MessageSigner

    /// The guard's Set-Cookie for a handoff that sends the browser back to `target`.
    func guardCookie(route: Route, target: String, secure: Bool, now: Date) throws(CryptoError) -> String {
        let expiry = Int(now.timeIntervalSince1970) + Self.guardLifetime
        let value = try signer.sign("\(expiry).\(route.index).\(try Self.fingerprint(target))")
        return "\(Self.guardName)=\(value); Max-Age=\(Self.guardLifetime)" + Self.attributes(route, secure: secure)
    }

    /// Whether the browser presents an unexpired guard of this route and page.
    func isGuarded(_ fields: HTTPFields, route: Route, target: String, now: Date) -> Bool {
        guard let fingerprint = try? Self.fingerprint(target) else { return false }
        return CookieHeader.values(named: Self.guardName, in: fields).contains { value in
            guard let payload = signer.verify(value) else { return false }
            let parts = payload.split(separator: ".")
            guard parts.count == 3, let expiry = Int(parts[0]) else { return false }
            return expiry >= Int(now.timeIntervalSince1970) && parts[1] == String(route.index) && parts[2] == fingerprint
        }
    }

    static func presentsGuard(_ fields: HTTPFields) -> Bool {
        !CookieHeader.values(named: guardName, in: fields).isEmpty
    }

    /// Removes the guard once a page has loaded, so that it marks only the one navigation.
    static func clearingGuard(route: Route, secure: Bool) -> String {
        "\(guardName)=; Max-Age=0" + attributes(route, secure: secure)
    }

    static func handedOffCookie(route: Route, secure: Bool) -> String {
        "\(handedOffName)=1" + attributes(route, secure: secure)
    }

    static func hasHandedOff(_ fields: HTTPFields) -> Bool {
        !CookieHeader.values(named: handedOffName, in: fields).isEmpty
    }

    private static func attributes(_ route: Route, secure: Bool) -> String {
        "; Path=\(route.pathPrefix); HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }

    /// A short digest of the page, so that the cookie does not repeat its path and query.
    private static func fingerprint(_ target: String) throws(CryptoError) -> String {
        Base64URL.encode(try Digest.sha256(Array(target.utf8)).prefix(16))
    }
}
