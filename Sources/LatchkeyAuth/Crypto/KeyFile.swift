#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Reads key files for `SigningKey` and `ServiceAccountKey`.
enum KeyFile {
    /// The file's bytes. The error names `origin` (which holds the path) and why the read
    /// failed (strerror), never what the file holds.
    static func read(_ path: String, origin: String) throws(CryptoError) -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = ((error as? CocoaError)?.underlying as? POSIXError)
                .map { String(cString: strerror($0.code.rawValue)) } ?? "unreadable"
            throw CryptoError(.keyFileUnreadable, detail: "cannot read \(origin): \(reason)")
        }
    }
}
