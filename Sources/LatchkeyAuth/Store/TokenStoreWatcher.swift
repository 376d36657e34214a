/// Hands what other processes change in a shared store (`latchkey login` or `logout`
/// beside a running `serve`) to the running identities, about once a `interval`, so that
/// a login takes effect without a restart. Its task only sleeps and awaits: the store does
/// its file I/O on its own queue.
public final class TokenStoreWatcher: Sendable {
    private let task: Task<Void, Never>

    public init(store: any WatchableTokenStore, identities: [Identity], interval: Duration = .seconds(1)) {
        let byName = Dictionary(identities.map { ($0.name, $0) }) { first, _ in first }
        let names = byName.keys.sorted()
        task = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled else { return }
                for (name, change) in await store.changes(among: names) {
                    byName[name]?.storeChanged(change)
                }
            }
        }
    }

    /// Stops watching; a pass under way finishes.
    public func stop() {
        task.cancel()
    }
}
