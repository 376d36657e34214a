import Glibc
import LatchkeyLoop
import Testing
@testable import LatchkeySystem

/// How `TerminalInput` reads a line from input that is not a terminal (a pipe, as
/// `echo 123456 | latchkey login …` gives): the terminal's echo needs a terminal.
@Suite struct TerminalInputTests {
    /// The line `written` makes, read through a pipe whose writing end is closed after it.
    private static func read(_ written: [UInt8]) throws -> String? {
        var ends: [Int32] = [0, 0]
        _ = try systemCall("pipe") { pipe(&ends) }
        let reading = FileDescriptor(rawValue: ends[0])
        defer { reading.close() }
        let writing = FileDescriptor(rawValue: ends[1])
        try writing.write(written)
        writing.close()
        return try TerminalInput(reading: reading).readLine()
    }

    @Test func readsOneLineWithoutItsBreak() throws {
        #expect(try Self.read(Array("123456\nrest\n".utf8)) == "123456")
        #expect(try Self.read(Array("123456\r\n".utf8)) == "123456")
    }

    @Test func aLastLineWithoutBreakCountsAndNothingIsNil() throws {
        #expect(try Self.read(Array("123456".utf8)) == "123456")
        #expect(try Self.read([]) == nil)
    }

    @Test func acceptsALineOfTheLimit() throws {
        let line = [UInt8](repeating: UInt8(ascii: "7"), count: TerminalInput.lineLimit)
        #expect(try Self.read(line + [UInt8(ascii: "\n")]) == String(decoding: line, as: UTF8.self))
    }

    @Test(arguments: [[UInt8(ascii: "\n")], []])
    func refusesALongerLineNamingTheLimit(end: [UInt8]) throws {
        let line = [UInt8](repeating: UInt8(ascii: "7"), count: TerminalInput.lineLimit + 1)
        let error = #expect(throws: TerminalInput.Failure.self) { try Self.read(line + end) }
        #expect(error?.description == "the line is longer than 4096 bytes, the most a typed value may be")
    }
}
