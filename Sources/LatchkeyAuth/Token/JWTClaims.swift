#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads claims from a JWT's payload without verifying it: Latchkey only needs to know
/// when a token it was given expires, and the upstream is the one that checks signatures.
public enum JWTClaims {
    /// The `exp` claim of a compact JWS, or nil if the token is not a JWT or has none.
    public static func expiry(of token: String) -> Date? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
              let claims = try? JSONDecoder().decode(Expiring.self, from: Data(payload)),
              let exp = claims.exp
        else { return nil }
        return Date(timeIntervalSince1970: exp)
    }

    private struct Expiring: Decodable {
        var exp: Double?
    }
}
