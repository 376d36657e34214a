import Dispatch

extension DispatchQueue {
    /// Runs `body` on this queue and waits for it without blocking the caller's thread: how
    /// the stores keep their blocking I/O (files, hiredis) off the cooperative pool.
    func perform<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
            async { continuation.resume(returning: Result { () throws(E) in try body() }) }
        }
        return try result.get()
    }
}
