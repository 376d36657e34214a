/// Signs short text values that travel through a browser or a terminal and come back (a
/// cookie, a one-time link) with HMAC-SHA256, so that the proxy can tell its own from a
/// forged or altered one. Verification accepts the current key and any previous one, so
/// that rotating the key does not break values signed before the rotation.
public struct MessageSigner: Sendable {
    /// The first key signs; every key verifies.
    private let keys: [[UInt8]]

    public init(key: [UInt8], previous: [[UInt8]] = []) {
        keys = [key] + previous
    }

    /// A signer with a fresh random key: for values that need not outlive the process.
    public static func ephemeral() throws(CryptoError) -> MessageSigner {
        MessageSigner(key: try SecureRandom.bytes(count: 32))
    }

    /// `payload.MAC`, the MAC in base64url. `payload` must not be empty; dots in it are fine
    /// (the MAC is what follows the last one).
    public func sign(_ payload: String) throws(CryptoError) -> String {
        payload + "." + Base64URL.encode(try Digest.hmacSHA256(key: keys[0], Array(payload.utf8)))
    }

    /// The payload of a value signed with one of the keys, or nil for anything else. Each
    /// MAC is compared in constant time.
    public func verify(_ signed: some StringProtocol) -> String? {
        guard let dot = signed.lastIndex(of: "."), dot != signed.startIndex else { return nil }
        let payload = String(signed[..<dot])
        let presented = String(signed[signed.index(after: dot)...])
        for key in keys {
            guard let mac = try? Digest.hmacSHA256(key: key, Array(payload.utf8)) else { return nil }
            if constantTimeEquals(Base64URL.encode(mac), presented) { return payload }
        }
        return nil
    }
}
