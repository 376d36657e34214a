import Foundation
import LatchkeyHTTP
import LatchkeyLoop
import Testing
@testable import LatchkeyServer

/// A connection holds its input buffer and request decoder (`RequestReader`) only while it
/// reads a request: the pool's rules, then the server's connections over real sockets.
@Suite(.serialized) struct RequestReaderTests {
    private func write(_ bytes: [UInt8], into reader: RequestReader) {
        let space = reader.input.writableSpace()
        bytes.withUnsafeBytes { space.copyMemory(from: $0) }
        reader.input.didWrite(bytes.count)
    }

    @Test func aReaderGivenBackKeepsItsBufferAndComesBackFirst() {
        let pool = RequestReaderPool(buffers: BufferPool(bufferSize: 64, maxKept: 4), maxKept: 2)
        let reader = pool.take(limits: HTTPLimits())
        write(Array("GET".utf8), into: reader)
        reader.input.consume(3)
        pool.give(reader)
        let again = pool.take(limits: HTTPLimits())
        #expect(again === reader)
        #expect(again.input.capacity == 64, "the buffer stayed with the reader")
        #expect(pool.keptCount == 0)
    }

    @Test func aGrownBufferIsFreedAndNewLimitsMakeANewDecoder() {
        let buffers = BufferPool(bufferSize: 8, maxKept: 4)
        let pool = RequestReaderPool(buffers: buffers, maxKept: 2)
        let reader = pool.take(limits: HTTPLimits())
        write(Array(repeating: 65, count: 8), into: reader)
        _ = reader.input.grow(upTo: 64)
        reader.input.consume(8)
        pool.give(reader)
        #expect(reader.input.capacity == 0)
        var limits = HTTPLimits()
        limits.maxHeaderBytes = 100
        let again = pool.take(limits: limits)
        #expect(again === reader)
        #expect(again.decoder.limits == limits)
    }

    @Test func readersBeyondTheLimitGoTheirBufferBackToTheBufferPool() {
        let buffers = BufferPool(bufferSize: 8, maxKept: 4)
        let pool = RequestReaderPool(buffers: buffers, maxKept: 1)
        let readers = [pool.take(limits: HTTPLimits()), pool.take(limits: HTTPLimits())]
        for reader in readers { write([1], into: reader); reader.input.consume(1) }
        for reader in readers { pool.give(reader) }
        #expect(pool.keptCount == 1)
        #expect(buffers.keptCount == 0, "the second reader is still alive here")
        _ = consume readers
        #expect(buffers.keptCount == 1)
    }

    @Test func anIdleKeptAliveConnectionHoldsNoReader() throws {
        let server = try ServerHarness()
        let client = try TestClient(port: server.port)
        client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.read(until: "bytes=").contains("GET /a bytes=0"))
        let keptAfterResponse = server.onLoop { $0.readers.keptCount }
        // Half a head: the connection holds the reader (and the bytes) until the rest.
        client.send("GET /b HTTP/1.1\r\nHo")
        Thread.sleep(forTimeInterval: 0.05)
        let keptMidHead = server.onLoop { $0.readers.keptCount }
        client.send("st: x\r\n\r\n")
        #expect(client.read(until: "bytes=").contains("GET /b bytes=0"))
        let keptAtTheEnd = server.onLoop { $0.readers.keptCount }
        #expect(keptAfterResponse == 1)
        #expect(keptMidHead == 0)
        #expect(keptAtTheEnd == 1)
    }

    /// The decoder knows how much of the body is still to come: its reader stays.
    @Test func aRequestBodyUnderWayKeepsTheReader() throws {
        let server = try ServerHarness()
        let client = try TestClient(port: server.port)
        client.send("POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nabc")
        Thread.sleep(forTimeInterval: 0.05)
        let keptMidBody = server.onLoop { $0.readers.keptCount }
        client.send("def")
        #expect(client.read(until: "bytes=").contains("POST /e bytes=6"))
        client.send("GET /f HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.read(until: "bytes=").contains("GET /f bytes=0"))
        #expect(keptMidBody == 0)
    }
}
