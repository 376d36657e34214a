import LatchkeyLoop

extension FileTokenStore {
    /// Compares each identity's file with what this store last read or wrote: a stat per
    /// file, and a read only when the signature moved (or is too recent to trust). The
    /// first sight of an identity only records it.
    ///
    /// Every change to the store renames a file into its directory or out of it (a write,
    /// a logout, a corrupt file moved aside), which moves the directory's own signature.
    /// While that stands still, only the files too recent to trust and the identities not
    /// seen yet are looked at: 10,000 identities were 10,000 stats a second otherwise.
    /// `now`: seconds since the epoch, for what counts as too recent.
    func poll(_ identities: [String], now: Int64 = FileSignature.now) -> [String: StoreChange] {
        let directory = FileSignature(path: files.path)
        let directoryUnchanged = directorySeen.withLock { seen in
            defer { seen = DirectorySeen(signature: directory, recheck: directory?.isRecent(at: now) ?? true) }
            return directory != nil && seen.signature == directory && !seen.recheck
        }
        var changes: [String: StoreChange] = [:]
        for identity in identities {
            let before = known.withLock { $0[identity] }
            if directoryUnchanged, let before, !before.recheck { continue }
            guard let path = try? files.file(for: identity) else { continue }
            let signature = FileSignature(path: path)
            if let before, before.signature == signature, !before.recheck { continue }
            do {
                let read = try current(identity)
                remember(identity, read, at: now)
                // The token and the logout mark are what other processes change (login,
                // logout); the cookies are this process's own.
                guard let before, read.record.token != before.record.token || read.record.loggedOut != before.record.loggedOut else { continue }
                changes[identity] = read.record.token.map(StoreChange.stored) ?? (read.record.loggedOut ? .loggedOut : .removed)
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
