extension TokenStore {
    /// Takes the identity's refresh lock, waiting while another process holds it: asks
    /// again every `RefreshLease.poll`, as that process lets go once its token is saved.
    /// Throws when the store cannot be reached.
    public func waitForRefreshLock(identity: String) async throws -> RefreshLease {
        while true {
            if case .acquired(let lease) = try await acquireRefreshLock(identity: identity) { return lease }
            try? await Task.sleep(for: RefreshLease.poll)
        }
    }
}

extension TokenStore {
    /// `logOut` while holding the identity's refresh lock, the one a serve (or a replica)
    /// holds from its token request until the answer is saved: a refresh in flight saves
    /// its token first, and that token is the one removed and returned (to be revoked); a
    /// refresh after this finds the mark when it reads the store under the lock, and stops.
    /// So no refresh undoes the logout. Waits for a lock that a dead Redis replica left
    /// until its lease expires.
    public func logOutUnderRefreshLock(identity: String) async throws -> TokenSet? {
        let lease = try await waitForRefreshLock(identity: identity)
        do {
            let token = try await logOut(identity: identity)
            await releaseRefreshLock(lease)
            return token
        } catch {
            await releaseRefreshLock(lease)
            throw error
        }
    }
}
