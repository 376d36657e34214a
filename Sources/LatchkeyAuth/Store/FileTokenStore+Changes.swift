import LatchkeyLoop

extension FileTokenStore {
    /// Compares each identity's file with what this store last read or wrote: a stat per
    /// file, and a read only when the signature moved (or is too recent to trust). The
    /// first sight of an identity only records it.
    func poll(_ identities: [String]) -> [String: StoreChange] {
        var changes: [String: StoreChange] = [:]
        for identity in identities {
            guard let path = try? files.file(for: identity) else { continue }
            let signature = FileSignature(path: path)
            let before = known.withLock { $0[identity] }
            if let before, before.signature == signature, !before.recheck { continue }
            do {
                let now = try current(identity)
                remember(identity, now)
                // The token and the logout mark are what other processes change (login,
                // logout); the cookies are this process's own.
                guard let before, now.record.token != before.record.token || now.record.loggedOut != before.record.loggedOut else { continue }
                changes[identity] = now.record.token.map(StoreChange.stored) ?? (now.record.loggedOut ? .loggedOut : .removed)
            } catch {
                // Reported once: the signature is taken as seen until the file changes again.
                changes[identity] = .unreadable(error.message)
                known.withLock { known in
                    let signature = error.code == .corrupt ? nil : signature
                    known[identity] = KnownEntry(signature: signature, recheck: false, record: before?.record ?? StoredRecord())
                }
            }
        }
        return changes
    }
}
