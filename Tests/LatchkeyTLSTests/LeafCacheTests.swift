import Foundation
import Testing
@testable import LatchkeyTLS

@Suite struct LeafCacheTests {
    static let now = CertificateAuthorityTests.now
    static let authority = CertificateAuthorityTests.authority

    @Test func theSameNamesInAnyOrderShareOneLeaf() throws {
        let cache = LeafCache()
        let first = try cache.leaf(for: ["a.test", "127.0.0.1"], authority: Self.authority, now: Self.now)
        let again = try cache.leaf(for: ["127.0.0.1", "A.test"], authority: Self.authority, now: Self.now.addingTimeInterval(86_400))
        #expect(again.leaf === first.leaf)
        #expect(cache.count == 1)
    }

    @Test func aLeafWithLessThanTwoDaysLeftIsMintedAgain() throws {
        let cache = LeafCache()
        let first = try cache.leaf(for: ["a.test"], authority: Self.authority, now: Self.now)
        let early = try cache.leaf(for: ["a.test"], authority: Self.authority, now: Self.now.addingTimeInterval(5 * 86_400 - 60))
        #expect(early.leaf === first.leaf)
        let late = Self.now.addingTimeInterval(5 * 86_400 + 60)
        let renewed = try cache.leaf(for: ["a.test"], authority: Self.authority, now: late)
        #expect(renewed.leaf !== first.leaf)
        #expect(renewed.leaf.notAfter == late.addingTimeInterval(7 * 86_400))
    }

    @Test func anotherCAMintsAgain() throws {
        let cache = LeafCache()
        let first = try cache.leaf(for: ["a.test"], authority: Self.authority, now: Self.now)
        let rotated = try CertificateAuthority.make(commonName: "rotated", lifetime: .seconds(365 * 86_400), now: Self.now)
        let second = try cache.leaf(for: ["a.test"], authority: rotated, now: Self.now)
        #expect(second.leaf !== first.leaf)
        #expect(second.chain[1] === rotated.certificate)
        #expect(ChainVerifier.verify(second, root: rotated.certificate, host: "a.test", at: Self.now) == nil)
    }

    @Test func theLeastRecentlyUsedLeafGoesFirst() throws {
        let cache = LeafCache(capacity: 2)
        let a = try cache.leaf(for: ["a.test"], authority: Self.authority, now: Self.now)
        let b = try cache.leaf(for: ["b.test"], authority: Self.authority, now: Self.now)
        _ = try cache.leaf(for: ["a.test"], authority: Self.authority, now: Self.now)
        _ = try cache.leaf(for: ["c.test"], authority: Self.authority, now: Self.now)
        #expect(cache.count == 2)
        #expect(try cache.leaf(for: ["a.test"], authority: Self.authority, now: Self.now).leaf === a.leaf)
        #expect(try cache.leaf(for: ["b.test"], authority: Self.authority, now: Self.now).leaf !== b.leaf)
    }

    @Test func aLeafEndingWithItsCAIsKeptUntilTheCAEnds() throws {
        let shortLived = try CertificateAuthority.make(commonName: "short", lifetime: .seconds(86_400), now: Self.now)
        let cache = LeafCache()
        let first = try cache.leaf(for: ["a.test"], authority: shortLived, now: Self.now)
        #expect(try cache.leaf(for: ["a.test"], authority: shortLived, now: Self.now.addingTimeInterval(3_600)).leaf === first.leaf)
    }
}
