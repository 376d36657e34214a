/// Carries a loop-confined object through a `Sendable` closure that runs it on the same
/// loop again. The loop's thread is the only one that touches `value`.
struct LoopBound<Value: AnyObject>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
