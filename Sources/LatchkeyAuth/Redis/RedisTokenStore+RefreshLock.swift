#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RedisTokenStore {
    /// `SET key owner NX PX ms`: set only when absent, and gone by itself after the lease's
    /// time, so that a replica that died holding it blocks the others no longer than that.
    public func acquireRefreshLock(identity: String) async throws(TokenStoreError) -> RefreshLockAttempt {
        try await onQueue { () throws(TokenStoreError) in
            let owner = try RefreshLease.newOwner()
            let milliseconds = self.leaseDuration.components.seconds * 1000 + self.leaseDuration.components.attoseconds / 1_000_000_000_000_000
            let command = ["SET", self.lockKey(identity), owner, "NX", "PX", String(max(1, milliseconds))].map { Array($0.utf8) }
            let expiresAt = Date().addingTimeInterval(Double(milliseconds) / 1000)
            switch try self.withConnection({ connection throws(TokenStoreError) in try connection.command(command) }) {
            case .status: return .acquired(RefreshLease(identity: identity, owner: owner, expiresAt: expiresAt))
            case .null: return .heldElsewhere
            case let other: throw self.refusal(other, "SET \(self.lockKey(identity)) NX")
            }
        }
    }

    /// Deletes the lock key only while it still names this lease's owner: compare and
    /// delete in one script, so that a lease that expired never frees the next holder's
    /// lock. A release that cannot reach Redis leaves the lease to expire.
    public func releaseRefreshLock(_ lease: RefreshLease) async {
        await onQueue {
            let command = ["EVAL", Self.compareAndDelete, "1", self.lockKey(lease.identity), lease.owner].map { Array($0.utf8) }
            if case .error(let message)? = try? self.withConnection({ connection throws(TokenStoreError) in try connection.command(command) }) {
                self.notices("cannot release the refresh lock of identity \(lease.identity); it expires by itself: \(message)")
            }
        }
    }

    /// The key of an identity's refresh lock.
    func lockKey(_ identity: String) -> String { keyPrefix + "refresh-lock:" + identity }

    static let compareAndDelete = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end
        """
}
