import LatchkeyAuth
import LatchkeyLoop

/// An exchange on a loop that waits for its identity's token: a proxied request, or an
/// upgrade's handshake.
protocol TokenWaiter: AnyObject {
    /// The identity's answer, on the exchange's loop.
    func tokenArrived(_ result: Result<IssuedToken, IdentityUnavailable>)
}

extension TokenWaiter {
    /// Asks for a token with `ask` (an identity's demand or renewal); the answer comes back
    /// on `loop`, the one this exchange lives on.
    func waitForToken(on loop: EventLoopHandle, _ ask: (@escaping Identity.Waiter) -> Void) {
        // As AnyObject: a closure that captured `Self` would not be Sendable.
        let waiter = LoopBound<AnyObject>(self)
        ask { result in
            loop.execute { _ in (waiter.value as? TokenWaiter)?.tokenArrived(result) }
        }
    }
}
