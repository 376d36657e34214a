/// A PKCE pair (RFC 7636): the code verifier the client keeps until it redeems the code,
/// and the S256 challenge it sends with the authorization request.
public struct PKCE: Sendable, Equatable {
    /// RFC 7636 §4.2: Latchkey always uses S256; `plain` would reveal the verifier.
    public static let challengeMethod = "S256"

    public let verifier: String
    /// BASE64URL(SHA256(ASCII(verifier))), RFC 7636 §4.2.
    public let challenge: String

    /// A fresh pair whose verifier encodes 32 random bytes (43 characters), as RFC 7636
    /// §4.1 recommends.
    public static func generate() throws(CryptoError) -> PKCE {
        try PKCE(verifierBytes: SecureRandom.bytes(count: 32))
    }

    /// The pair for a known verifier; throws unless it is 43–128 characters of
    /// `[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"` (RFC 7636 §4.1).
    public init(verifier: String) throws(CryptoError) {
        guard (43...128).contains(verifier.utf8.count), verifier.utf8.allSatisfy(Self.isUnreserved) else {
            throw CryptoError(.invalidCodeVerifier, detail: "a code verifier is 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
        }
        self.verifier = verifier
        challenge = Base64URL.encode(try Digest.sha256(Array(verifier.utf8)))
    }

    /// The verifier that base64url-encodes `verifierBytes` (RFC 7636 §4.1).
    init(verifierBytes: [UInt8]) throws(CryptoError) {
        try self.init(verifier: Base64URL.encode(verifierBytes))
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
