import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The 256-bit key that seals a token store, and where it came from.
///
/// The bytes live in one buffer of their own, wiped with OPENSSL_cleanse when the key goes
/// away; copies made while decoding the text are wiped as soon as the bytes are in place.
/// `@unchecked Sendable`: the buffer is written once in `init` and only read afterwards.
public final class StoreKey: @unchecked Sendable {
    public static let byteCount = 32
    /// What to tell the user a key looks like.
    public static let textExpectation = "the base64 of 32 random bytes, e.g. the output of `openssl rand -base64 32`"

    /// Where the key came from, for messages: "environment variable LATCHKEY_STORE_KEY".
    public let origin: String
    private let bytes: UnsafeMutableRawBufferPointer

    /// Reads the base64 text of 32 bytes; surrounding whitespace (the line break `openssl
    /// rand -base64 32 > file` leaves) is ignored. `text` is wiped before this returns.
    /// `noun` names the key in messages.
    public init(text: inout [UInt8], origin: String, noun: String = "store key") throws(TokenStoreError) {
        defer { Self.wipe(&text) }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
        let start = text.firstIndex { !isSpace($0) } ?? text.endIndex
        let end = text.lastIndex { !isSpace($0) }.map { $0 + 1 } ?? start
        guard start < end else { throw TokenStoreError(.invalidKey, "the \(noun) from \(origin) is empty (expected \(Self.textExpectation))") }
        var decoded = Data(base64Encoded: Data(text[start..<end])) ?? Data()
        defer { decoded.resetBytes(in: 0..<decoded.count) }
        guard decoded.count == Self.byteCount else {
            throw TokenStoreError(.invalidKey, "the \(noun) from \(origin) is not \(Self.textExpectation)")
        }
        bytes = .allocate(byteCount: Self.byteCount, alignment: 16)
        bytes.copyBytes(from: decoded)
        self.origin = origin
    }

    deinit {
        OPENSSL_cleanse(bytes.baseAddress, bytes.count)
        bytes.deallocate()
    }

    /// The raw key, for the cipher only; never copy it out of `body`.
    func withUnsafeBytes<T>(_ body: (UnsafeRawBufferPointer) throws(CryptoError) -> T) throws(CryptoError) -> T {
        try body(UnsafeRawBufferPointer(bytes))
    }

    /// Overwrites key text or key bytes that are no longer needed.
    static func wipe(_ buffer: inout [UInt8]) {
        buffer.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
    }
}
