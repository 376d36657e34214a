#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The leaves the local CA minted, by the set of names they cover, so that a listener's
/// context and (issue 14) every intercepted host name share one leaf instead of minting
/// one per handshake. At most `capacity` leaves, the least recently used going first; a
/// leaf is minted again when less than `renewalMargin` of it remains or another CA is in
/// use.
public final class LeafCache: Sendable {
    public static let defaultCapacity = 1_024
    /// Two days: a leaf lives seven, so a daily check always finds it before it expires.
    public static let renewalMargin: TimeInterval = 2 * 86_400

    private struct Entry {
        var identity: TLSIdentity
        var lastUse: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var clock: UInt64 = 0
    }

    public let capacity: Int
    private let state = Mutex(State())

    public init(capacity: Int = LeafCache.defaultCapacity) {
        precondition(capacity > 0, "a leaf cache holds at least one leaf")
        self.capacity = capacity
    }

    /// The number of leaves held.
    public var count: Int { state.withLock { $0.entries.count } }

    /// A leaf of `authority` for `names` (the order does not matter), minted when there is
    /// none, when it was signed by another CA or when it ends within `renewalMargin`.
    /// Minting (a key and a signature) happens outside the lock; two callers that miss at
    /// once both mint, and the later one's leaf is kept.
    public func leaf(for names: [String], authority: CertificateAuthority, now: Date) throws(TLSError) -> TLSIdentity {
        let key = Set(names.map { $0.lowercased() }).sorted().joined(separator: "\n")
        let cached = state.withLock { state -> TLSIdentity? in
            guard var entry = state.entries[key] else { return nil }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.identity
        }
        if let cached, Self.isCurrent(cached, authority: authority, now: now) { return cached }
        let minted = try authority.mintLeaf(names: names, now: now)
        state.withLock { state in
            state.clock += 1
            state.entries[key] = Entry(identity: minted, lastUse: state.clock)
            // A linear scan, only when full: far cheaper than the minting that led here.
            if state.entries.count > capacity, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                state.entries[oldest] = nil
            }
        }
        return minted
    }

    private static func isCurrent(_ identity: TLSIdentity, authority: CertificateAuthority, now: Date) -> Bool {
        guard identity.chain.count > 1, identity.chain[1].isSame(as: authority.certificate) else { return false }
        // A leaf that already ends with its CA cannot be made to last longer by minting again.
        return identity.leaf.notAfter.timeIntervalSince(now) >= renewalMargin || identity.leaf.notAfter >= authority.certificate.notAfter
    }
}
