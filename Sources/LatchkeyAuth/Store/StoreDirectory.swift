#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop
import LatchkeySystem

/// The directory of a file store: one `<identity>.json` per identity with its
/// `<identity>.refresh-lock`, the lock file, and the temporary and moved-aside files beside
/// them.
struct StoreDirectory: Sendable {
    let path: String

    /// Creates the directory (and missing parents) with mode 0700, then refuses it unless
    /// it belongs to the user running Latchkey and is closed to everyone else.
    init(creating path: String) throws(TokenStoreError) {
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        try Self.makeDirectories(self.path)
        let status: FileStatus
        do throws(SystemError) {
            status = try FileStatus(path: self.path)
        } catch {
            throw TokenStoreError(.unusablePath, "cannot stat store directory \(self.path): \(error.reason)")
        }
        guard status.kind == .directory else {
            throw TokenStoreError(.unusablePath, "store directory \(self.path) is not a directory")
        }
        try PrivateFile.requirePrivate(status, self.path, .storeDirectory)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// The file of `identity`. Names pass through when they are made of letters, digits,
    /// '-', '_' and '.' (as config names are) and do not start with '.'; any other byte
    /// becomes %XX, so that no name can reach outside the directory, hide as a dot file or
    /// collide with another.
    func file(for identity: String) throws(TokenStoreError) -> String {
        guard !identity.isEmpty else { throw TokenStoreError(.invalidIdentity, "an identity needs a name to be stored") }
        // Made as bytes: a string appended to one character at a time was 1% of starting a
        // server with 10,000 identities.
        var name: [UInt8] = []
        name.reserveCapacity(identity.utf8.count)
        for (offset, byte) in identity.utf8.enumerated() {
            let plain = (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                || (byte == UInt8(ascii: ".") && offset > 0)
            if plain {
                name.append(byte)
            } else {
                name += [UInt8(ascii: "%"), Self.hexDigits[Int(byte >> 4)], Self.hexDigits[Int(byte & 0xF)]]
            }
        }
        // NAME_MAX is 255; leave room for the suffixes of temporary and moved-aside files.
        guard name.count <= 200 else {
            throw TokenStoreError(.invalidIdentity, "the identity name is too long to name a store file")
        }
        return path + "/" + String(decoding: name, as: UTF8.self) + ".json"
    }

    /// The file whose flock is the identity's refresh lock, beside its store file.
    func refreshLockFile(for identity: String) throws(TokenStoreError) -> String {
        let file = try file(for: identity)
        return file.dropLast(".json".count) + ".refresh-lock"
    }

    /// Where a corrupt `file` goes: `<file>.corrupt-<UTC time>`, numbered when that exists.
    func quarantine(_ file: String, now: Date) -> String {
        var seconds = time_t(now.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let stamp = String(parts.tm_year + 1900) + [parts.tm_mon + 1, parts.tm_mday].map { String($0).leftPadded(to: 2) }.joined()
            + "T" + [parts.tm_hour, parts.tm_min, parts.tm_sec].map { String($0).leftPadded(to: 2) }.joined() + "Z"
        let base = "\(file).corrupt-\(stamp)"
        var candidate = base
        var number = 1
        while FileSignature(path: candidate) != nil {
            number += 1
            candidate = "\(base)-\(number)"
        }
        return candidate
    }

    /// Removes the temporary files of writes a crash interrupted (each holds a token). The
    /// caller holds the exclusive lock, so no write is under way.
    func removeInterruptedWrites() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        for name in names where name.hasPrefix(".") && name.contains(PrivateFile.temporaryMarker) {
            try? FileSystem.remove("\(path)/\(name)")
        }
    }

    /// mkdir -p with mode 0700 for what is missing; existing parents are left as they are.
    private static func makeDirectories(_ path: String) throws(TokenStoreError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            do throws(SystemError) {
                try FileSystem.makeDirectory(prefix, permissions: 0o700)
            } catch where error.errno == EEXIST {
                continue
            } catch {
                throw TokenStoreError(.unusablePath, "cannot create store directory \(prefix): \(error.reason)")
            }
        }
    }
}
