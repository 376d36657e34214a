#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop
import LatchkeySystem

/// The file operations of the token store and its key files, each with the check that
/// keeps secrets private: what holds a token or a key belongs to the user running
/// Latchkey and is closed to everyone else, as ssh insists for its keys.
enum PrivateFile {
    /// What a checked path is: its name in messages, the chmod that fixes it, and how
    /// strictly it is checked.
    struct Kind {
        var noun: String
        var privateMode: String
        /// Key files may sit behind links (Kubernetes mounts secrets so); store files never do.
        var followsLinks = false
        /// As OpenSSH accepts for its files, root owning a key file does not expose it.
        var rootMayOwn = false
        /// False for systemd credentials: systemd makes them private to the service itself,
        /// with an ACL whose mask shows in the group bits.
        var checksPermissions = true

        static let storeDirectory = Kind(noun: "store directory", privateMode: "700")
        static let storeFile = Kind(noun: "store file", privateMode: "600")
        static let lockFile = Kind(noun: "store lock file", privateMode: "600")
        static let refreshLockFile = Kind(noun: "refresh lock file", privateMode: "600")
        static let routeIdentities = Kind(noun: "route identity file", privateMode: "600")
        static let certificateAuthorityKey = Kind(noun: "CA key file", privateMode: "600")
        static let keyFile = Kind(noun: "key file", privateMode: "600", followsLinks: true, rootMayOwn: true)
        static let systemdCredential = Kind(noun: "systemd credential", privateMode: "600", followsLinks: true, checksPermissions: false)
    }

    /// Store files are small; anything larger is not one.
    static let maxBytes = 1 << 20
    /// In the names of temporary files: `.<file>.tmp-<random>`.
    static let temporaryMarker = ".tmp-"

    /// Refuses what others could read or write, or what another user owns.
    static func requirePrivate(_ status: FileStatus, _ path: String, _ kind: Kind) throws(TokenStoreError) {
        guard kind.checksPermissions else { return }
        let process = ProcessIdentity.current()
        if let problem = problem(path, owner: status.owner, group: status.group, mode: status.permissions, kind: kind, process: process) {
            throw TokenStoreError(.unsafePermissions, problem)
        }
    }

    /// What makes the file of `kind` at `path`, with this owner, group and mode, unsafe for
    /// `process`, and what fixes it; nil when it is private.
    static func problem(_ path: String, owner: uid_t, group: gid_t, mode: mode_t, kind: Kind, process: ProcessIdentity) -> String? {
        guard owner == process.user || (kind.rootMayOwn && owner == 0) else {
            return "\(kind.noun) \(path) is owned by uid \(owner), not by uid \(process.user) that runs Latchkey; it must belong to that user"
        }
        // PostgreSQL's rule for a key file that root owns: its group may read it when the
        // group is Latchkey's own. That is how Kubernetes mounts a Secret for a non-root pod:
        // root's, mode 0440, in the pod's fsGroup (defaultMode 0400 plus group read).
        let groupMayRead = kind.rootMayOwn && owner == 0 && owner != process.user && process.groups.contains(group)
        guard mode & (groupMayRead ? 0o037 : 0o077) == 0 else {
            return "\(kind.noun) \(path) is accessible by others (mode \(octal(mode))); run chmod \(groupMayRead ? "440" : kind.privateMode) \(path)"
        }
        return nil
    }

    /// The whole of a private regular file and what fstat(2) said of it, or nil when there
    /// is none.
    static func read(_ path: String, _ kind: Kind) throws(TokenStoreError) -> (bytes: [UInt8], status: FileStatus)? {
        let file: FileDescriptor
        do {
            file = try .open(path, .readOnly, options: kind.followsLinks ? [] : .noFollow)
        } catch {
            if error.errno == ENOENT { return nil }
            if error.errno == ELOOP { throw TokenStoreError(.unusablePath, "\(kind.noun) \(path) is a symbolic link; it must be a regular file") }
            throw TokenStoreError(.unusablePath, "cannot open \(kind.noun) \(path): \(error.reason)")
        }
        defer { file.close() }
        let status = try status(of: file, path, kind)
        guard status.kind == .regular else { throw TokenStoreError(.unusablePath, "\(kind.noun) \(path) is not a regular file") }
        try requirePrivate(status, path, kind)
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        defer { StoreKey.wipe(&chunk) }
        while true {
            let count: Int
            do throws(SystemError) {
                count = try file.read(into: &chunk)
            } catch {
                StoreKey.wipe(&contents)
                throw TokenStoreError(.unusablePath, "cannot read \(kind.noun) \(path): \(error.reason)")
            }
            if count == 0 { return (contents, status) }
            contents.append(contentsOf: chunk[..<count])
            if contents.count > maxBytes {
                StoreKey.wipe(&contents)
                throw TokenStoreError(.unusablePath, "\(kind.noun) \(path) is larger than \(maxBytes) bytes")
            }
        }
    }

    /// Replaces `path` so that a reader sees the old file or the new one, never a part,
    /// and the new one survives a crash: a fresh 0600 file beside it, written whole,
    /// fsync'ed, renamed over the old one, then the directory fsync'ed so that the rename
    /// itself is on disk. `permissions` other than 0600 are for public files (a CA
    /// certificate).
    static func replace(_ path: String, in directory: String, with bytes: [UInt8], permissions: mode_t = 0o600) throws(TokenStoreError) {
        let (temporary, file) = try createTemporary(beside: path, in: directory)
        do throws(SystemError) {
            defer { file.close() }
            if permissions != 0o600 { try file.setPermissions(permissions) }
            try file.write(bytes)
            try file.sync()
        } catch {
            try? FileSystem.remove(temporary)
            throw TokenStoreError(.writeFailed, "cannot write \(temporary): \(error.reason)")
        }
        do throws(SystemError) {
            try FileSystem.rename(temporary, to: path)
        } catch {
            try? FileSystem.remove(temporary)
            throw TokenStoreError(.writeFailed, "cannot rename \(temporary) to \(path): \(error.reason)")
        }
        try syncDirectory(directory)
    }

    /// Removes `path` for good (the unlink reaches the disk); nothing to do when it is gone.
    static func remove(_ path: String, in directory: String) throws(TokenStoreError) {
        do throws(SystemError) {
            try FileSystem.remove(path)
        } catch {
            if error.errno == ENOENT { return }
            throw TokenStoreError(.writeFailed, "cannot remove \(path): \(error.reason)")
        }
        try syncDirectory(directory)
    }

    /// Renames `path` to `target` unless `target` exists (link, then unlink: link(2)
    /// never replaces), making the result durable.
    static func moveAside(_ path: String, to target: String, in directory: String) throws(TokenStoreError) {
        do throws(SystemError) {
            try FileSystem.link(path, to: target)
            try FileSystem.remove(path)
        } catch {
            throw TokenStoreError(.writeFailed, "cannot move \(path) aside to \(target): \(error.reason)")
        }
        try syncDirectory(directory)
    }

    /// Opens a lock file, created 0600 when missing, and refuses one others can reach. The
    /// descriptor is the caller's to close; closing it drops any flock(2) it holds.
    static func openLockFile(_ path: String, _ kind: Kind) throws(TokenStoreError) -> FileDescriptor {
        let file: FileDescriptor
        do {
            file = try .open(path, .readWrite, options: [.create, .noFollow])
        } catch {
            throw TokenStoreError(.unusablePath, "cannot open \(kind.noun) \(path): \(error.reason)")
        }
        do throws(TokenStoreError) {
            try requirePrivate(try status(of: file, path, kind), path, kind)
        } catch {
            file.close()
            throw error
        }
        return file
    }

    static func status(of file: FileDescriptor, _ path: String, _ kind: Kind) throws(TokenStoreError) -> FileStatus {
        do throws(SystemError) {
            return try file.status()
        } catch {
            throw TokenStoreError(.unusablePath, "cannot stat \(kind.noun) \(path): \(error.reason)")
        }
    }

    /// "0755".
    static func octal(_ mode: mode_t) -> String {
        String(mode, radix: 8).leftPadded(to: 4)
    }

    /// O_EXCL with a random name: never opens a file someone else put there.
    private static func createTemporary(beside path: String, in directory: String) throws(TokenStoreError) -> (String, FileDescriptor) {
        let base = path.split(separator: "/").last.map(String.init) ?? "store"
        while true {
            let suffix: String
            do {
                suffix = try SecureRandom.urlSafeString(byteCount: 6)
            } catch {
                throw TokenStoreError(.writeFailed, "cannot name a temporary file in \(directory): \(error)")
            }
            let temporary = "\(directory)/.\(base)\(temporaryMarker)\(suffix)"
            do {
                return (temporary, try .open(temporary, .writeOnly, options: [.create, .exclusive, .noFollow]))
            } catch {
                if error.errno == EEXIST { continue }
                throw TokenStoreError(.writeFailed, "cannot create \(temporary): \(error.reason)")
            }
        }
    }

    private static func syncDirectory(_ directory: String) throws(TokenStoreError) {
        do throws(SystemError) {
            let file = try FileDescriptor.open(directory, .readOnly, options: .directory)
            defer { file.close() }
            try file.sync()
        } catch {
            throw TokenStoreError(.writeFailed, "cannot sync store directory \(directory): \(error.reason)")
        }
    }
}

extension String {
    /// "7" → "07" for width 2: numbers in file names and modes.
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
