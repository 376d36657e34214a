import LatchkeySystem

/// Why a secret could not be read. The message names the file or variable, never a value.
public struct SecretError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// Turns a `SecretSource` into its value: inline text, an environment variable, or a file
/// whose trailing line break is trimmed (as `echo token > file` and Kubernetes leave it).
public enum SecretResolver {
    /// A secret file larger than this is refused: it is not a token, and a mistaken
    /// `/dev/zero` must not hang the loader.
    public static let maxFileBytes = 64 * 1024

    public static func resolve(_ source: SecretSource, environment: [String: String]) throws(SecretError) -> String {
        switch source {
        case .inline(let value):
            return try validate(value, origin: "the inline value")
        case .environment(let name):
            guard let value = environment[name] else {
                throw SecretError("environment variable \(name) is not set")
            }
            return try validate(value, origin: "environment variable \(name)")
        case .file(let path):
            return try validate(trimTrailingLineBreaks(try readFile(path)), origin: "file \(path)")
        }
    }

    /// Secrets travel in header, query and cookie values: an empty one is a mistake and a
    /// line break or NUL would split or end the field (header injection).
    static func validate(_ value: String, origin: String) throws(SecretError) -> String {
        if value.isEmpty { throw SecretError("\(origin) is empty") }
        if value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
            throw SecretError("\(origin) contains a line break or NUL")
        }
        return value
    }

    static func trimTrailingLineBreaks(_ text: String) -> String {
        let bytes = text.utf8
        let trailing = bytes.reversed().prefix { $0 == 0x0A || $0 == 0x0D }.count
        return trailing == 0 ? text : String(decoding: bytes.dropLast(trailing), as: UTF8.self)
    }

    /// open(2)/read(2) rather than Foundation, to say why a read failed (errno).
    static func readFile(_ path: String) throws(SecretError) -> String {
        let file: FileDescriptor
        do {
            file = try .open(path, .readOnly)
        } catch {
            throw SecretError("cannot open \(path): \(error.reason)")
        }
        defer { file.close() }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count: Int
            do {
                count = try file.read(into: &chunk)
            } catch {
                throw SecretError("cannot read \(path): \(error.reason)")
            }
            if count == 0 { break }
            contents.append(contentsOf: chunk[..<count])
            if contents.count > maxFileBytes {
                throw SecretError("\(path) is larger than \(maxFileBytes) bytes, which is not a secret")
            }
        }
        return String(decoding: contents, as: UTF8.self)
    }
}
