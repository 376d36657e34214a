import LatchkeyLoop
import LatchkeySystem

extension FileTokenStore {
    /// flock(2) on the identity's `<identity>.refresh-lock`, without waiting (LOCK_NB): the
    /// lock belongs to the open file, so it excludes other processes and other stores in
    /// this one, and it goes with its process if that dies, so the lease needs no expiry.
    /// The store's own `.lock` is never held meanwhile: readers and writers go on.
    public func acquireRefreshLock(identity: String) async throws(TokenStoreError) -> RefreshLockAttempt {
        try await onQueue { () throws(TokenStoreError) in try self.lockRefresh(identity) }
    }

    public func releaseRefreshLock(_ lease: RefreshLease) async {
        refreshLocks.withLock { $0.removeValue(forKey: lease.owner) }.map(Self.release)
    }

    /// Unlocks, then closes: the lock belongs to the open file, which a process being
    /// spawned at this moment shares until it execs. Closing alone would leave it held
    /// through that copy.
    static func release(_ file: FileDescriptor) {
        file.unlock()
        file.close()
    }

    private func lockRefresh(_ identity: String) throws(TokenStoreError) -> RefreshLockAttempt {
        let path = try files.refreshLockFile(for: identity)
        let file = try PrivateFile.openLockFile(path, .refreshLockFile)
        do throws(SystemError) {
            try file.lock(.exclusive, waiting: false)
        } catch {
            file.close()
            if error.wouldBlock { return .heldElsewhere }
            throw TokenStoreError(.unusablePath, "cannot lock \(path): \(error.reason)")
        }
        let owner: String
        do {
            owner = try RefreshLease.newOwner()
        } catch {
            file.close()
            throw error
        }
        refreshLocks.withLock { $0[owner] = file }
        return .acquired(RefreshLease(identity: identity, owner: owner, expiresAt: nil))
    }
}
