#if canImport(Glibc)
import Glibc
#endif

/// What holds the secrets a log line must never show: the credentials the proxy loaded.
/// Asked on every line, so a reload's new secrets are masked from the moment it takes effect.
public protocol LogRedactionSource: AnyObject, Sendable {
    /// Made again only when the secrets change: it is asked for at every line.
    var redactionMask: SecretMask { get }
}

/// Replaces every occurrence of one secret in a finished log line.
enum LogRedaction {
    static let replacement = Array("[REDACTED]".utf8)

    /// memchr(3) for the secret's first byte, memcmp(3) for the rest: this runs on every
    /// log line.
    static func mask(_ secret: [UInt8], in line: inout [UInt8]) {
        guard let first = secret.first, secret.count <= line.count else { return }
        var hits: [Int] = []
        line.withUnsafeBytes { haystack in
            secret.withUnsafeBytes { needle in
                let base = haystack.baseAddress!
                let last = haystack.count - needle.count
                var offset = 0
                while offset <= last {
                    guard let hit = memchr(base + offset, Int32(first), last - offset + 1) else { return }
                    let position = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + position, needle.baseAddress!, needle.count) == 0 {
                        hits.append(position)
                        offset = position + needle.count
                    } else {
                        offset = position + 1
                    }
                }
            }
        }
        for position in hits.reversed() {
            line.replaceSubrange(position..<(position + secret.count), with: replacement)
        }
    }
}
