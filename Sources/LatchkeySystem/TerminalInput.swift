#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop
import Synchronization

/// A line a person types that others nearby should not read off the screen (a one-time
/// code, a password). Standard input when it is not a terminal (a script's pipe, as in
/// `echo 123456 | latchkey login …`), as it comes; else the controlling terminal with its
/// echo off. At most `lineLimit` bytes: a value to type, not a file piped in by mistake.
/// Blocking: read it on a thread of its own.
public final class TerminalInput: Sendable {
    /// The longest line `readLine` accepts, in bytes before its line feed.
    public static let lineLimit = 4096

    /// A line longer than `lineLimit`, or the read failing.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case lineTooLong
        case read(SystemError)

        public var description: String {
            switch self {
            case .lineTooLong: "the line is longer than \(TerminalInput.lineLimit) bytes, the most a typed value may be"
            case .read(let error): error.description
            }
        }
    }

    private let fd: FileDescriptor
    /// Whether the line comes from the terminal, which this input opened (else from standard
    /// input, or the descriptor a test gave).
    public let isTerminal: Bool
    /// The terminal's settings before the echo went off; nil when reading standard input,
    /// and once they are restored.
    private let saved: Mutex<termios?>

    private init(_ fd: FileDescriptor, isTerminal: Bool, saved: termios?) {
        self.fd = fd
        self.isTerminal = isTerminal
        self.saved = Mutex(saved)
    }

    /// Reads `descriptor` as it comes, without closing it (tests give a pipe).
    convenience init(reading descriptor: FileDescriptor) {
        self.init(descriptor, isTerminal: false, saved: nil)
    }

    /// Standard input when isatty(3) says it is no terminal; else opens /dev/tty and turns
    /// its echo off (tcsetattr(3), clearing ECHO; line editing and Ctrl-C stay as they are).
    public convenience init() throws(SystemError) {
        guard isatty(STDIN_FILENO) == 1 else {
            self.init(reading: FileDescriptor(rawValue: STDIN_FILENO))
            return
        }
        let tty = try FileDescriptor.open("/dev/tty", .readWrite)
        let settings: termios
        do {
            settings = try Self.turnEchoOff(tty)
        } catch {
            tty.close()
            throw error
        }
        self.init(tty, isTerminal: true, saved: settings)
    }

    /// Clears ECHO on `tty`: the settings it had before.
    private static func turnEchoOff(_ tty: FileDescriptor) throws(SystemError) -> termios {
        var settings = termios()
        _ = try systemCall("tcgetattr") { tcgetattr(tty.rawValue, &settings) }
        var quiet = settings
        quiet.c_lflag &= ~tcflag_t(ECHO)
        _ = try systemCall("tcsetattr") { tcsetattr(tty.rawValue, TCSAFLUSH, &quiet) }
        return settings
    }

    deinit {
        restore()
        if isTerminal { fd.close() }
    }

    /// The next line, without its line break; nil when the input ends first. The echo
    /// comes back once it is read, or once the line proves longer than `lineLimit`.
    public func readLine() throws(Failure) -> String? {
        defer { restore() }
        var line: [UInt8] = []
        var byte = [UInt8](repeating: 0, count: 1)
        while try read(into: &byte) == 1 {
            if byte[0] == UInt8(ascii: "\n") { return String(decoding: line.last == 13 ? line.dropLast() : line[...], as: UTF8.self) }
            guard line.count < Self.lineLimit else { throw .lineTooLong }
            line.append(byte[0])
        }
        return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
    }

    private func read(into byte: inout [UInt8]) throws(Failure) -> Int {
        do {
            return try fd.read(into: &byte)
        } catch {
            throw .read(error)
        }
    }

    /// Turns the echo back on, once, and ends the line the person typed on (which the
    /// terminal did not show). Safe from any thread: a cancelled read calls it while the
    /// reading thread still waits.
    public func restore() {
        guard var settings = saved.withLock({ saved in defer { saved = nil }; return saved }) else { return }
        _ = tcsetattr(fd.rawValue, TCSAFLUSH, &settings)
        try? fd.write(Array("\n".utf8))
    }
}
