import COpenSSL
import Synchronization

/// The keys that seal session tickets (RFC 5077 §4's recommended format: a 16-byte key
/// name, AES-256-CBC, HMAC-SHA256), one ring per process and shared by every server
/// context, so that a certificate reload keeps resumption working. Made with RAND_bytes,
/// kept in memory only: a restart invalidates every ticket, which costs one full handshake.
///
/// A key encrypts for one `rotation` interval and decrypts for two, so that a ticket lives
/// at most twice the interval; a ticket sealed with the previous key is accepted and
/// replaced by a fresh one.
public final class TicketKeyRing: Sendable {
    struct Key: Equatable {
        let name: [UInt8]
        let cipherKey: [UInt8]
        let macKey: [UInt8]
        let createdAt: ContinuousClock.Instant
    }

    /// What decrypting with a named key found.
    enum Lookup: Equatable {
        case current(Key)
        /// The previous key: accept the ticket and issue a renewed one.
        case previous(Key)
        case unknown
    }

    static let nameLength = 16
    static let cipherKeyLength = 32
    static let macKeyLength = 32

    public let rotation: Duration
    private let keys: Mutex<(current: Key, previous: Key?)>

    public init(rotation: Duration = .seconds(3600)) throws(TLSError) {
        guard let first = Self.makeKey(at: .now) else {
            throw TLSError(.setup, "no random bytes for the session ticket keys (\(OpenSSLErrors.drainReasons()))")
        }
        self.rotation = rotation
        keys = Mutex((current: first, previous: nil))
    }

    /// The key to seal a new ticket with at `now`, rotating first when it is due.
    func encryptionKey(at now: ContinuousClock.Instant) -> Key {
        keys.withLock { keys in
            // Without random bytes the current key goes on sealing until they come back.
            if now - keys.current.createdAt >= rotation, let fresh = Self.makeKey(at: now) {
                keys = (current: fresh, previous: keys.current)
            }
            return keys.current
        }
    }

    /// The key named by a ticket presented at `now`, while it may still decrypt.
    func decryptionKey(named name: UnsafeRawBufferPointer, at now: ContinuousClock.Instant) -> Lookup {
        keys.withLock { keys in
            if keys.current.name.elementsEqual(name), now - keys.current.createdAt < rotation * 2 {
                return .current(keys.current)
            }
            if let previous = keys.previous, previous.name.elementsEqual(name), now - previous.createdAt < rotation * 2 {
                return .previous(previous)
            }
            return .unknown
        }
    }

    private static func makeKey(at now: ContinuousClock.Instant) -> Key? {
        guard let name = randomBytes(nameLength), let cipherKey = randomBytes(cipherKeyLength), let macKey = randomBytes(macKeyLength) else {
            return nil
        }
        return Key(name: name, cipherKey: cipherKey, macKey: macKey, createdAt: now)
    }

    /// RAND_bytes; nil when OpenSSL has no entropy to give.
    private static func randomBytes(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        return RAND_bytes(&bytes, Int32(count)) == 1 ? bytes : nil
    }
}
