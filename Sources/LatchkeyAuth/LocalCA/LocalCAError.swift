import LatchkeyTLS

/// Why the local CA cannot be loaded, made or written: the message names the file and
/// what to do, ready for `check`, the CLI and the log.
public struct LocalCAError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    init(_ error: TLSError) {
        message = error.message
    }

    init(_ error: TokenStoreError) {
        message = error.message
    }

    public var description: String { message }
}
