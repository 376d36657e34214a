/// Bounds on what a client may make the decoder hold or scan. Each is checked on the bytes
/// present, so a client that never finishes its head cannot grow the caller's buffer past
/// them (slow-loris).
public struct HTTPLimits: Sendable, Equatable, Hashable {
    /// Longest request line, CRLF excluded. Over it: 414 (RFC 9112 §3).
    public var maxRequestLineBytes: Int
    /// Longest head: request line, field lines and the final CRLF (empty lines before the
    /// request line are not counted). Also bounds a trailer section. Over it: 431.
    public var maxHeaderBytes: Int
    /// Most field lines in a head or trailer section. Over it: 431.
    public var maxHeaderCount: Int
    /// Most bytes of chunk extensions (from the first byte after a chunk size to its CRLF,
    /// summed over the whole body). Extensions carry nothing a proxy uses; unbounded ones
    /// let a client stream without sending content (cf. CVE-2024-22019 in Node.js).
    public var maxChunkExtensionBytes: Int

    public init(
        maxRequestLineBytes: Int = 8192,
        maxHeaderBytes: Int = 65536,
        maxHeaderCount: Int = 100,
        maxChunkExtensionBytes: Int = 4096
    ) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxChunkExtensionBytes = maxChunkExtensionBytes
    }
}
