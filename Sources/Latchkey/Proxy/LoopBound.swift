#if canImport(Glibc)
import Glibc
#endif

/// Carries a loop-confined object through a `Sendable` closure that runs it on the same
/// loop again. The loop's thread is the only one that touches `value`; debug builds check
/// it (a loop is one thread for its whole life, so the thread stands for the loop).
struct LoopBound<Value: AnyObject>: @unchecked Sendable {
    private let bound: Value
    #if DEBUG
    private let thread = pthread_self()
    #endif

    /// Call on the loop that owns `value`.
    init(_ value: Value) { bound = value }

    var value: Value {
        #if DEBUG
        precondition(pthread_equal(thread, pthread_self()) != 0, "LoopBound used off the loop it was made on")
        #endif
        return bound
    }
}
