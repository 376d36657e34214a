#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import Synchronization

/// The proxy's own session for a listener with `inbound.session`: a browser on another
/// machine opens a one-time link from `latchkey login-link`, gets the `latchkey_session`
/// cookie, and presents it with every request. Both are values signed with HMAC-SHA256
/// under the listener's session key; a rotated-out key still verifies what it signed until
/// that expires. Shared by every loop.
final class SessionGate: Sendable {
    static let cookieName = "latchkey_session"
    static let loginPath = "/.latchkey/login"
    /// The login link's query parameter; redacted in the access log as route secrets are.
    static let tokenParameter = "token"
    /// Links redeemed and not yet expired are remembered, so that each works once; past
    /// this many at once, further links are refused until some expire (the memory stays
    /// bounded whatever a client sends: only validly signed links get this far).
    static let maxRemembered = 10_000

    private let signer: MessageSigner
    private let lifetime: Int
    /// The listener speaks TLS: the cookie is Secure (ListenerPolicy.clientsUseTLS).
    private let secureCookie: Bool
    /// Redeemed link nonce → the link's expiry (Unix seconds).
    private let redeemed: Mutex<[String: Int]>

    /// `previous`: the listener's gate before a configuration reload, whose redeemed links
    /// stay redeemed here, so that none works twice.
    init(signer: MessageSigner, lifetime: Duration, secureCookie: Bool = false, remembering previous: SessionGate? = nil) {
        self.signer = signer
        self.lifetime = Int(lifetime.components.seconds)
        self.secureCookie = secureCookie
        redeemed = Mutex(previous?.redeemed.withLock { $0 } ?? [:])
    }

    /// Reads the key files (again, on a reload: a rotated key takes effect).
    convenience init(settings: SessionSettings, secureCookie: Bool, remembering previous: SessionGate? = nil) throws(CryptoError) {
        self.init(signer: try settings.signer(), lifetime: settings.lifetime, secureCookie: secureCookie, remembering: previous)
    }

    /// Whether the request presents a session this proxy signed that has not expired.
    func admits(_ fields: HTTPFields, now: Date) -> Bool {
        CookieHeader.values(named: Self.cookieName, in: fields).contains { value in
            guard let payload = signer.verify(value) else { return false }
            let parts = payload.split(separator: ".")
            guard parts.count == 3, parts[0] == "session", let expiry = Int(parts[2]) else { return false }
            return expiry >= Int(now.timeIntervalSince1970)
        }
    }

    enum Redemption: Equatable {
        /// The session cookie's Set-Cookie value, and the route the link was made for.
        case session(setCookie: String, route: String)
        case refused(String)
    }

    /// Trades a login link's token for a session, once.
    func redeem(_ token: String, now: Date) -> Redemption {
        guard let link = LoginLink(verifying: token, with: signer) else {
            return .refused("this login link is not one this proxy made, or it was altered")
        }
        let seconds = Int(now.timeIntervalSince1970)
        guard link.expiry >= seconds else { return .refused("this login link has expired; make a new one with `latchkey login-link`") }
        let first = redeemed.withLock { redeemed -> Bool? in
            guard redeemed[link.nonce] == nil else { return false }
            // Expired links are forgotten when room is needed: they are refused by their expiry.
            if redeemed.count >= Self.maxRemembered { redeemed = redeemed.filter { $0.value >= seconds } }
            guard redeemed.count < Self.maxRemembered else { return nil }
            redeemed[link.nonce] = link.expiry
            return true
        }
        switch first {
        case true?: break
        case false?: return .refused("this login link was used already; each works once")
        case nil: return .refused("too many login links were used in the last minutes; try again later")
        }
        do {
            let id = try SecureRandom.urlSafeString(byteCount: 16)
            let value = try signer.sign("session.\(id).\(seconds + lifetime)")
            var cookie = "\(Self.cookieName)=\(value); Max-Age=\(lifetime); Path=/; HttpOnly; SameSite=Lax"
            if secureCookie { cookie += "; Secure" }
            return .session(setCookie: cookie, route: link.route)
        } catch {
            return .refused("cannot make a session: \(error)")
        }
    }
}

extension SessionSettings {
    /// Signs with the current key; verifies with it and every previous one. Reads the key
    /// files, which must be private.
    func signer() throws(CryptoError) -> MessageSigner {
        let key = try SecretKeyFile.read(keyFile, noun: "session key")
        var previous: [[UInt8]] = []
        for file in previousKeyFiles { previous.append(try SecretKeyFile.read(file, noun: "previous session key")) }
        return MessageSigner(key: key, previous: previous)
    }
}
