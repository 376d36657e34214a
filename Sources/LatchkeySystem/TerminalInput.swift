#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop
import Synchronization

/// A line a person types that others nearby should not read off the screen (a one-time
/// code, a password): read from the controlling terminal with its echo off, or from
/// standard input, as it comes, when the process has none (a script's pipe). Blocking:
/// read it on a thread of its own.
public final class TerminalInput: Sendable {
    private let fd: FileDescriptor
    /// The terminal's settings before the echo went off; nil when reading standard input.
    private let saved: Mutex<termios?>

    /// Opens /dev/tty and turns its echo off (tcsetattr(3), clearing ECHO; line editing
    /// and Ctrl-C stay as they are); standard input when there is no terminal.
    public init() throws(SystemError) {
        guard let tty = try? FileDescriptor.open("/dev/tty", .readWrite) else {
            fd = FileDescriptor(rawValue: STDIN_FILENO)
            saved = Mutex(nil)
            return
        }
        fd = tty
        var settings = termios()
        _ = try systemCall("tcgetattr") { tcgetattr(tty.rawValue, &settings) }
        var quiet = settings
        quiet.c_lflag &= ~tcflag_t(ECHO)
        _ = try systemCall("tcsetattr") { tcsetattr(tty.rawValue, TCSAFLUSH, &quiet) }
        saved = Mutex(settings)
    }

    /// Whether the line comes from the terminal (else from standard input).
    public var isTerminal: Bool { fd.rawValue != STDIN_FILENO }

    deinit {
        restore()
        if isTerminal { fd.close() }
    }

    /// The next line, without its line break; nil when the input ends first. The echo
    /// comes back once it is read.
    public func readLine() throws(SystemError) -> String? {
        defer { restore() }
        var line: [UInt8] = []
        var byte = [UInt8](repeating: 0, count: 1)
        while try fd.read(into: &byte) == 1 {
            if byte[0] == UInt8(ascii: "\n") { return String(decoding: line.last == 13 ? line.dropLast() : line[...], as: UTF8.self) }
            line.append(byte[0])
        }
        return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
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
