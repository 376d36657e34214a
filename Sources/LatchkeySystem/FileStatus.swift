#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop

/// What stat(2) or fstat(2) says of a file that a permission check needs.
public struct FileStatus: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case regular, directory, symbolicLink, socket, other
    }

    public var kind: Kind
    public var owner: uid_t
    public var group: gid_t
    /// The permission bits (mode & 07777).
    public var permissions: mode_t
    /// Identity, size and times, to tell a rewrite.
    public var signature: FileSignature

    public init(kind: Kind, owner: uid_t, group: gid_t, permissions: mode_t, signature: FileSignature) {
        self.kind = kind
        self.owner = owner
        self.group = group
        self.permissions = permissions
        self.signature = signature
    }

    init(_ info: stat) {
        let kind: Kind = switch info.st_mode & S_IFMT {
        case S_IFREG: .regular
        case S_IFDIR: .directory
        case S_IFLNK: .symbolicLink
        case S_IFSOCK: .socket
        default: .other
        }
        self.init(kind: kind, owner: info.st_uid, group: info.st_gid, permissions: info.st_mode & 0o7777, signature: FileSignature(info))
    }

    /// stat(2) of `path`, following symbolic links.
    public init(path: String) throws(SystemError) {
        var info = stat()
        _ = try systemCall("stat") { stat(path, &info) }
        self.init(info)
    }
}
