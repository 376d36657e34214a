/// `inbound: { session: … }`: a browser proves it may use the listener with the proxy's
/// own session cookie, which it gets by opening a one-time link from `latchkey login-link`.
public struct SessionSettings: Sendable, Equatable {
    /// The key that signs sessions and links: the base64 of 32 random bytes in a private
    /// file (0600 or 0400), read by `serve` and by `latchkey login-link`.
    public var keyFile: String
    /// Keys rotated out: what they signed is still accepted until it expires.
    public var previousKeyFiles: [String]
    /// How long a session lasts (the cookie's Max-Age and the expiry it carries signed).
    public var lifetime: Duration
    /// How long a login link works; each works once.
    public var linkLifetime: Duration

    public static let defaultLifetime = Duration.seconds(12 * 3600)
    public static let defaultLinkLifetime = Duration.seconds(300)

    public init(keyFile: String, previousKeyFiles: [String] = [], lifetime: Duration = Self.defaultLifetime,
                linkLifetime: Duration = Self.defaultLinkLifetime) {
        self.keyFile = keyFile
        self.previousKeyFiles = previousKeyFiles
        self.lifetime = lifetime
        self.linkLifetime = linkLifetime
    }
}
