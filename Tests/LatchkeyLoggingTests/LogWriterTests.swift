#if canImport(Glibc)
import Glibc
#endif
import CoreMetrics
import MetricsTestKit
import Testing
@testable import LatchkeyLogging

/// The writer against a real pipe: one the test does not read is a stuck log shipper.
@Suite struct LogWriterTests {
    /// A pipe whose kernel buffer is one page, so that a few lines fill it. Never closed: a
    /// writer's thread lives as long as the process, and would write into whatever the next
    /// test opened under a closed descriptor's number.
    struct SmallPipe {
        let read: Int32
        let write: Int32

        init() throws {
            var fds: [Int32] = [0, 0]
            try #require(pipe(&fds) == 0)
            read = fds[0]
            write = fds[1]
            _ = fcntl(write, 1031 /* F_SETPIPE_SZ */, 4096)
        }

        /// Fills the pipe with "-" until it takes no more, so that the next write blocks
        /// until the pipe is read; returns how many bytes that took.
        func fill() -> Int {
            let flags = fcntl(write, F_GETFL)
            _ = fcntl(write, F_SETFL, flags | O_NONBLOCK)
            defer { _ = fcntl(write, F_SETFL, flags) }
            let chunk = [UInt8](repeating: UInt8(ascii: "-"), count: 512)
            var total = 0
            while case let count = Glibc.write(write, chunk, chunk.count), count > 0 { total += count }
            return total
        }

        /// Everything written until `done` says the text is complete, waiting up to 10 s
        /// for each piece.
        func readUntil(_ done: (String) -> Bool) -> String {
            var text = ""
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while !done(text) {
                var poller = pollfd(fd: read, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 10_000) == 1 else { break }
                let count = Glibc.read(read, &buffer, buffer.count)
                guard count > 0 else { break }
                text += String(decoding: buffer[..<count], as: UTF8.self)
            }
            return text
        }
    }

    static func line(_ number: Int) -> [UInt8] {
        Array("line \(number) \(String(repeating: "x", count: 80))\n".utf8)
    }

    @Test func queuedLinesAreWrittenInOrder() throws {
        let output = try SmallPipe()
        let writer = LogWriter(fd: output.write) { _ in [] }
        for number in 0..<100 { writer.append(Self.line(number)) }
        let text = output.readUntil { $0.contains("line 99 ") }
        let numbers = text.split(separator: "\n").map { $0.split(separator: " ")[1] }
        #expect(numbers == (0..<100).map { Substring(String($0)) })
        #expect(writer.droppedLines == 0)
    }

    /// The point of the writer: with nobody reading, `append` returns at once and the
    /// lines that do not fit are counted, in the metric too; when the output moves again,
    /// what was kept comes out, then a note saying how many were lost.
    @Test func aFullOutputDropsAndCountsLinesInsteadOfBlocking() throws {
        let output = try SmallPipe()
        let metrics = TestMetrics()
        let counter = Counter(label: "latchkey_log_lines_dropped_total", factory: metrics)
        let writer = LogWriter(fd: output.write, capacity: 2048) { dropped in Array("dropped \(dropped)\n".utf8) }
        writer.countDroppedLines(in: counter)
        // A full pipe from the start: the writer blocks on its first batch, and every line
        // after it is kept or dropped while nobody reads. When the writer takes that batch
        // is the scheduler's: late, the buffer may already have dropped lines, and lines
        // appended after it took them are kept and come after the note.
        let filled = output.fill()
        let total = 1000
        for number in 0..<total { writer.append(Self.line(number)) }

        let dropped = writer.droppedLines
        #expect(dropped > 0)
        #expect(try metrics.expectCounter(counter).totalValue == Int64(dropped))
        // One note per time the writer found lines dropped: their sum is the count.
        func notes(_ text: String) -> [Int] {
            text.split(separator: "\n").compactMap { $0.hasPrefix("dropped ") ? Int($0.dropFirst(8)) : nil }
        }
        func kept(_ lines: some Sequence<Substring>) -> [Int] {
            lines.filter { $0.hasPrefix("line ") }.compactMap { Int($0.split(separator: " ")[1]) }
        }
        let text = String(output.readUntil { text in
            notes(text).reduce(0, +) == dropped && kept(text.dropFirst(filled).split(separator: "\n")).count + dropped == total
                && text.hasSuffix("\n")
        }.dropFirst(filled))
        let lines = text.split(separator: "\n")
        #expect(notes(text).reduce(0, +) == dropped)
        #expect(kept(lines) == kept(lines).sorted())
        #expect(kept(lines).count + dropped == total)
        // Each note comes where its lines were lost: a line after the last note was
        // appended after every dropped one.
        let lastNote = try #require(lines.lastIndex { $0.hasPrefix("dropped ") })
        let lost = Set(0..<total).subtracting(kept(lines))
        #expect(kept(lines[(lastNote + 1)...]).allSatisfy { $0 > lost.max() ?? -1 })
    }

    @Test func dropsBeforeTheCounterIsAttachedAreCountedToo() throws {
        let output = try SmallPipe()
        let writer = LogWriter(fd: output.write, capacity: 512) { _ in [] }
        for number in 0..<200 { writer.append(Self.line(number)) }
        let dropped = writer.droppedLines
        #expect(dropped > 0)
        let metrics = TestMetrics()
        let counter = Counter(label: "latchkey_log_lines_dropped_total", factory: metrics)
        writer.countDroppedLines(in: counter)
        #expect(try metrics.expectCounter(counter).totalValue == Int64(dropped))
    }

    @Test func flushWaitsForQueuedLinesAndGivesUpOnAStuckOutput() throws {
        let output = try SmallPipe()
        let writer = LogWriter(fd: output.write) { _ in [] }
        writer.append(Self.line(1))
        writer.flush(timeout: .seconds(5))
        let text = output.readUntil { $0.contains("line 1 ") }
        #expect(text == String(decoding: Self.line(1), as: UTF8.self))

        // Nobody reads: far more than the pipe holds stays queued, and flush returns.
        for number in 0..<200 { writer.append(Self.line(number)) }
        writer.flush(timeout: .milliseconds(50))
        _ = output.readUntil { $0.contains("line 199 ") }
    }
}
