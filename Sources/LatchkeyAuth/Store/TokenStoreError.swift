/// Why a token store cannot be opened, read or written. The message names the directory,
/// the file and the key's origin (an environment variable, a key file) and says what to do;
/// it never contains a token or key material.
public struct TokenStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The directory or a file is accessible by others, or owned by another user.
        case unsafePermissions
        /// The directory or a file cannot be created, opened or read, or is not what it
        /// should be (a symbolic link, a directory where a file belongs).
        case unusablePath
        /// The key's text or its source is unusable, or more than one source gives a key.
        case invalidKey
        /// A file is encrypted and no key is configured.
        case keyMissing
        /// A well-formed encrypted file does not open with the configured key.
        case wrongKey
        /// A file that is not a store file at all (truncated, not JSON): it was moved aside.
        case corrupt
        /// A store file of a format this version does not know (written by a newer one).
        case unsupportedFormat
        case writeFailed
        /// An identity name that cannot name a file.
        case invalidIdentity
        /// The store's server cannot be reached or cannot serve now (Redis down, loading,
        /// refusing the password): worth retrying; the process keeps its tokens meanwhile.
        case unavailable
        /// The store's server refused a command for good (a key of another type).
        case refused
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
