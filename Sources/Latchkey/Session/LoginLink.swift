#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth

/// A one-time login link for a listener with `inbound.session`, as `latchkey login-link`
/// prints it: `http://HOST:PORT/.latchkey/login?token=link.NONCE.EXPIRY.ROUTE.MAC`. The CLI
/// and the server read the same key file, so the CLI needs no connection to the server;
/// the server remembers the nonces it took (SessionGate), so each link works once.
struct LoginLink: Equatable {
    let nonce: String
    /// Unix seconds.
    let expiry: Int
    /// Where the browser goes once it has its session.
    let route: String

    /// A fresh link's token, signed.
    static func token(route: String, signer: MessageSigner, now: Date, lifetime: Duration) throws(CryptoError) -> String {
        let nonce = try SecureRandom.urlSafeString(byteCount: 16)
        return try signer.sign("link.\(nonce).\(Int(now.timeIntervalSince1970) + Int(lifetime.components.seconds)).\(route)")
    }

    /// The link in a token that `signer` made, or nil.
    init?(verifying token: String, with signer: MessageSigner) {
        guard let payload = signer.verify(token) else { return nil }
        // Route names may hold dots: they come last.
        let parts = payload.split(separator: ".", maxSplits: 3)
        guard parts.count == 4, parts[0] == "link", let expiry = Int(parts[2]) else { return nil }
        nonce = String(parts[1])
        self.expiry = expiry
        route = String(parts[3])
    }
}
