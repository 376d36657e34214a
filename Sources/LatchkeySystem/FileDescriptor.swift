#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop

/// An open file, for the blocking file work of the control plane and the CLI (token store,
/// key and secret files), never for an event loop's sockets. A value: its owner closes it
/// once, with `close()`. Every call retries EINTR and throws the errno (`systemCall`).
public struct FileDescriptor: Sendable, Hashable {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    public enum Access: Sendable {
        case readOnly, writeOnly, readWrite

        var flags: Int32 {
            switch self {
            case .readOnly: O_RDONLY
            case .writeOnly: O_WRONLY
            case .readWrite: O_RDWR
            }
        }
    }

    public struct Options: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// O_CREAT, with the permissions given to `open`.
        public static let create = Options(rawValue: O_CREAT)
        /// O_EXCL: fails with EEXIST rather than open a file someone else put there.
        public static let exclusive = Options(rawValue: O_EXCL)
        /// O_NOFOLLOW: fails with ELOOP on a symbolic link.
        public static let noFollow = Options(rawValue: O_NOFOLLOW)
        /// O_DIRECTORY: only a directory (to fsync it).
        public static let directory = Options(rawValue: O_DIRECTORY)
    }

    /// open(2), always close-on-exec so that no child (a browser) inherits it; `permissions`
    /// for a file `.create` makes.
    public static func open(
        _ path: String, _ access: Access, options: Options = [], permissions: mode_t = 0o600
    ) throws(SystemError) -> FileDescriptor {
        let flags = access.flags | options.rawValue | O_CLOEXEC
        return FileDescriptor(rawValue: try systemCall("open") { Glibc.open(path, flags, permissions) })
    }

    /// close(2). Its error is not reported: the descriptor is gone either way (Linux), and
    /// what was written is checked by `sync()` before.
    public func close() {
        _ = Glibc.close(rawValue)
    }

    /// read(2) into `buffer`: the count read, 0 at the end of the file.
    public func read(into buffer: inout [UInt8]) throws(SystemError) -> Int {
        let fd = rawValue
        return try buffer.withUnsafeMutableBytes { buffer in
            Result { () throws(SystemError) in try systemCall("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) } }
        }.get()
    }

    /// write(2) until all of `bytes` is written.
    public func write(_ bytes: [UInt8]) throws(SystemError) {
        let fd = rawValue
        var written = 0
        while written < bytes.count {
            written += try bytes[written...].withUnsafeBytes { rest in
                Result { () throws(SystemError) in try systemCall("write") { Glibc.write(fd, rest.baseAddress, rest.count) } }
            }.get()
        }
    }

    /// fsync(2): what was written (or, for a directory, renamed into it) is on disk.
    public func sync() throws(SystemError) {
        _ = try systemCall("fsync") { fsync(rawValue) }
    }

    /// fchmod(2): `permissions` exactly, whatever the umask took away when the file was made.
    public func setPermissions(_ permissions: mode_t) throws(SystemError) {
        _ = try systemCall("fchmod") { fchmod(rawValue, permissions) }
    }

    /// fstat(2).
    public func status() throws(SystemError) -> FileStatus {
        var info = stat()
        _ = try systemCall("fstat") { fstat(rawValue, &info) }
        return FileStatus(info)
    }
}
