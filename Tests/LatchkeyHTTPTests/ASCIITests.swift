@testable import LatchkeyHTTP
import LatchkeyTestSupport
import Testing

/// The byte classes against their definitions, and the eight-byte tests against the
/// bytewise ones they stand for.
@Suite struct ASCIITests {
    @Test func tokenBytesAreExactlyTchar() {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(ASCII.isTokenByte(byte) == tchar.contains(byte), "byte \(byte)")
        }
    }

    @Test func authorityBytesAreExactlyAHostsAndPorts() {
        let unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        let allowed = Set((unreserved + "!$&'()*+,;=" + ":[]%").utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(ASCII.isAuthorityByte(byte) == allowed.contains(byte), "byte \(byte)")
        }
    }

    @Test func fieldValueBytes() {
        for byte in UInt8.min...UInt8.max {
            let expected = byte == 0x09 || (0x20...0x7E).contains(byte) || byte >= 0x80
            #expect(ASCII.isFieldValueByte(byte) == expected, "byte \(byte)")
        }
    }

    @Test func wordTestsAgreeWithByteTests() {
        var random = SeededGenerator(seed: 7)
        // Random words, plus words built from the boundary bytes where borrows and carries
        // between bytes would show.
        let edges: [UInt8] = [0x00, 0x09, 0x0A, 0x0D, 0x0E, 0x1F, 0x20, 0x21, 0x7E, 0x7F, 0x80, 0xFE, 0xFF]
        for round in 0..<20_000 {
            var bytes = (0..<8).map { _ in UInt8.random(in: 0x20...0x7E, using: &random) }
            let changes = round % 3
            for _ in 0..<changes {
                bytes[Int.random(in: 0..<8, using: &random)] = round % 2 == 0
                    ? edges.randomElement(using: &random)!
                    : UInt8.random(in: 0...255, using: &random)
            }
            let word = bytes.withUnsafeBytes { ASCII.loadWord($0, 0) }
            #expect(ASCII.plainVisiblePrefix(word) == (bytes.firstIndex { !(0x20...0x7E).contains($0) } ?? 8), "\(bytes)")
        }
    }
}

extension ASCIITests {
    @Test func theNameWordTestAgreesWithTheByteTest() {
        var random = SeededGenerator(seed: 11)
        let nameBytes = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-".utf8)
        // The bytes on either side of each range, and their high-bit twins, where a borrow,
        // a carry or the case fold would show.
        let edges: [UInt8] = [0x00, 0x2C, 0x2D, 0x2E, 0x2F, 0x30, 0x39, 0x3A, 0x40, 0x41, 0x5A, 0x5B, 0x5E, 0x5F, 0x60,
                              0x61, 0x7A, 0x7B, 0x7E, 0x7F, 0x80, 0xAD, 0xB0, 0xC1, 0xE1, 0xFA, 0xFF, 0x0D, 0x20, 0x3A]
        for round in 0..<20_000 {
            var bytes = (0..<8).map { _ in nameBytes.randomElement(using: &random)! }
            for _ in 0..<(round % 3) {
                bytes[Int.random(in: 0..<8, using: &random)] = round % 2 == 0
                    ? edges.randomElement(using: &random)!
                    : UInt8.random(in: 0...255, using: &random)
            }
            let word = bytes.withUnsafeBytes { ASCII.loadWord($0, 0) }
            let expected = bytes.firstIndex { !nameBytes.contains($0) } ?? 8
            #expect(ASCII.nameBytePrefix(word) == expected, "\(bytes)")
        }
    }
}

@Suite struct BytePrefixTests {
    @Test func aPrefixIsComparedByItsBytes() {
        #expect("127.0.0.1".hasBytePrefix("127."))
        #expect("/.latchkey/health".hasBytePrefix("/.latchkey"))
        #expect("/.latchkey".hasBytePrefix("/.latchkey"))
        #expect("x".hasBytePrefix(""))
        #expect(!"/.latch".hasBytePrefix("/.latchkey"))
        #expect(!"128.0.0.1".hasBytePrefix("127."))
        #expect(!"".hasBytePrefix("/"))
        // Longer than a small string's 15 bytes, and not ASCII: still bytes.
        #expect(String(repeating: "/.latchkey", count: 4).hasBytePrefix("/.latchkey"))
        #expect("é/x".hasBytePrefix("é"))
        #expect(!"e\u{301}/x".hasBytePrefix("é"))
    }

    @Test func aMethodIsComparedByAllItsBytes() {
        #expect("HEAD".hasBytes("HEAD"))
        #expect(!"GET".hasBytes("HEAD"))
        #expect(!"HEADER".hasBytes("HEAD"))
        #expect(!"head".hasBytes("HEAD"))
        #expect(!"".hasBytes("HEAD"))
        #expect("".hasBytes(""))
        #expect(String(repeating: "M", count: 20).hasBytes("MMMMMMMMMMMMMMMMMMMM"))
    }

    @Test func sameBytesAreTheSameLengthAndEveryByte() {
        func same(_ left: [UInt8], _ right: [UInt8]) -> Bool {
            left.withUnsafeBufferPointer { left in right.withUnsafeBufferPointer { left.hasSameBytes(as: $0) } }
        }
        #expect(same(Array("/api".utf8), Array("/api".utf8)))
        #expect(same([], []))
        #expect(!same(Array("/api".utf8), Array("/apj".utf8)))
        #expect(!same(Array("/api".utf8), Array("/ap".utf8)))
        #expect(!same([], [0]))
        #expect(!same([0x41], [0x61]), "bytes, not letters ignoring case")
    }
}
