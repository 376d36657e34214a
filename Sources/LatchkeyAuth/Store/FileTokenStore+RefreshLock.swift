#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop

extension FileTokenStore {
    /// flock(2) on the identity's `<identity>.refresh-lock`, without waiting (LOCK_NB): the
    /// lock belongs to the open file, so it excludes other processes and other stores in
    /// this one, and it goes with its process if that dies, so the lease needs no expiry.
    /// The store's own `.lock` is never held meanwhile: readers and writers go on.
    public func acquireRefreshLock(identity: String) async throws(TokenStoreError) -> RefreshLockAttempt {
        try await onQueue { () throws(TokenStoreError) in try self.lockRefresh(identity) }
    }

    public func releaseRefreshLock(_ lease: RefreshLease) async {
        guard let fd = refreshLocks.withLock({ $0.removeValue(forKey: lease.owner) }) else { return }
        close(fd)
    }

    private func lockRefresh(_ identity: String) throws(TokenStoreError) -> RefreshLockAttempt {
        let path = try files.refreshLockFile(for: identity)
        let fd = try PrivateFile.openLockFile(path, .refreshLockFile)
        do throws(SystemError) {
            _ = try systemCall("flock") { flock(fd, LOCK_EX | LOCK_NB) }
        } catch {
            close(fd)
            if error.wouldBlock { return .heldElsewhere }
            throw TokenStoreError(.unusablePath, "cannot lock \(path): \(PrivateFile.reason(error))")
        }
        let owner: String
        do {
            owner = try RefreshLease.newOwner()
        } catch {
            close(fd)
            throw error
        }
        refreshLocks.withLock { $0[owner] = fd }
        return .acquired(RefreshLease(identity: identity, owner: owner, expiresAt: nil))
    }
}
