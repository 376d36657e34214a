@testable import LatchkeyTLS
import Testing

/// Ticket keys by the clock: a key seals for one interval, opens for two, and the
/// previous one asks for a renewed ticket.
struct TicketKeyRingTests {
    let start = ContinuousClock.now

    func name(_ key: TicketKeyRing.Key) -> [UInt8] { key.name }

    func lookup(_ ring: TicketKeyRing, _ key: TicketKeyRing.Key, after elapsed: Duration) -> TicketKeyRing.Lookup {
        key.name.withUnsafeBytes { ring.decryptionKey(named: $0, at: start + elapsed) }
    }

    @Test func theCurrentKeySealsUntilTheRotationIsDue() throws {
        let ring = try TicketKeyRing(rotation: .seconds(3600))
        let first = ring.encryptionKey(at: start)
        #expect(first.name.count == 16 && first.cipherKey.count == 32 && first.macKey.count == 32)
        #expect(ring.encryptionKey(at: start + .seconds(10)) == first)
        #expect(lookup(ring, first, after: .seconds(10)) == .current(first))
    }

    @Test func afterARotationThePreviousKeyOpensAndAsksForRenewal() throws {
        let ring = try TicketKeyRing(rotation: .seconds(3600))
        let first = ring.encryptionKey(at: start)
        let second = ring.encryptionKey(at: start + .seconds(3700))
        #expect(second != first && second.name != first.name)
        #expect(lookup(ring, first, after: .seconds(3700)) == .previous(first))
        #expect(lookup(ring, second, after: .seconds(3700)) == .current(second))
    }

    /// A ticket lives at most two intervals, even when no handshake rotated the keys.
    @Test func aKeyOpensNothingTwoIntervalsAfterItWasMade() throws {
        let ring = try TicketKeyRing(rotation: .seconds(3600))
        let first = ring.encryptionKey(at: start)
        #expect(lookup(ring, first, after: .seconds(7300)) == .unknown)
        _ = ring.encryptionKey(at: start + .seconds(3700))
        let third = ring.encryptionKey(at: start + .seconds(7400))
        #expect(lookup(ring, first, after: .seconds(7400)) == .unknown)
        #expect(lookup(ring, third, after: .seconds(7400)) == .current(third))
    }

    @Test func anUnknownNameOpensNothing() throws {
        let ring = try TicketKeyRing()
        let stranger = [UInt8](repeating: 7, count: 16)
        #expect(stranger.withUnsafeBytes { ring.decryptionKey(named: $0, at: start) } == .unknown)
    }
}
