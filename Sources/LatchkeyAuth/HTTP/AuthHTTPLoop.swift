import LatchkeyLoop
import LatchkeyUpstream

/// The client's side of its loop: the curl multi and the requests in flight, found by
/// their ticket. Attached to the loop; everything here runs on the loop's thread.
final class AuthHTTPLoop {
    private unowned let loop: EventLoop
    /// Nil after shutdown. It holds the loop strongly: releasing it breaks that cycle.
    private var upstream: UpstreamClient?
    private var inFlight: [ObjectIdentifier: AuthHTTPExchange] = [:]

    init(loop: EventLoop) throws(UpstreamError) {
        self.loop = loop
        upstream = try UpstreamClient(loop: loop)
    }

    func start(
        _ request: AuthHTTPRequest,
        ticket: AuthHTTPTicket,
        report: @escaping (AuthHTTPExchange.Outcome) -> Void
    ) {
        guard !ticket.isCancelled else { return report(.failure(.cancelled)) }
        guard let upstream else { return report(.failure(.shutdown)) }
        let id = ObjectIdentifier(ticket)
        let exchange = AuthHTTPExchange(loop: loop, maxResponseBytes: request.maxResponseBytes) { [weak self] outcome in
            // The ticket stays alive with the caller's task until this runs, so its id
            // is not reused before the entry goes.
            self?.inFlight[id] = nil
            report(outcome)
        }
        inFlight[id] = exchange
        exchange.start(request, on: upstream)
    }

    func cancel(_ ticket: AuthHTTPTicket) {
        inFlight[ObjectIdentifier(ticket)]?.end(.cancelled)
    }

    /// Fails everything in flight, releases the curl multi (closing its connections) and
    /// stops the loop.
    func shutDown() {
        for exchange in Array(inFlight.values) { exchange.end(.shutdown) }
        upstream = nil
        loop.stop()
    }
}
