#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyServer
import LatchkeyConfig
import LatchkeyUpstream

extension ProxyExchange {
    /// The upstream answered a browser's navigation with 401 on a route with a handoff: the
    /// browser is handed the web session and sent back to the page, once. A page that still
    /// answers 401 with the handoff's guard present gets an error page instead, so that a
    /// session the app does not accept cannot make a redirect loop.
    func handOff(after refused: UpstreamTransfer) {
        cancel(refused)
        guard let settings = route.handoff, let caller = context.handoffCaller else { return }
        let head = exchange.head
        if context.handoffMarks.isGuarded(head.fields, route: route, target: head.target, now: Date()) {
            handler.logger.warning("page refused after a handoff", metadata: ["route": .string(route.name)])
            return conclude(.refused(
                ErrorDocument(status: 502, error: "handoff_failed",
                              message: "the page still answered 401 after a handoff: the session the handoff endpoint gave does not open it",
                              route: route.name),
                form: .page, outcome: "handoff_failed"))
        }
        let handoff = HandoffExchange(exchange: exchange, route: route, handoff: settings, handler: handler, context: context,
                                      destination: head.target, rewriter: rewriter)
        self.handoff = handoff
        handoff.start(caller: caller, identity: identity, credentials: blueprint.credentials)
    }

    /// The upstream answered 401 on a route whose cookies the proxy keeps (`jar: proxy`):
    /// the handoff endpoint's cookies go into the identity's jar (curl's cookie engine takes
    /// them from its answer), and the request is sent again with them, once. Any client
    /// gets the page; the next one finds the session in the jar.
    func refillJar(after refused: UpstreamTransfer) {
        cancel(refused)
        guard let settings = route.handoff, let caller = context.handoffCaller else { return }
        exchange.pauseRequestBody()
        handler.logger.info("filling the cookie jar from the handoff endpoint", metadata: ["route": .string(route.name)])
        let this = LoopBound(self)
        let loop = handler.loop.handle
        caller.call(route: route, handoff: settings, identity: identity, credentials: blueprint.credentials, jar: cookieJar) { outcome in
            loop.execute { _ in this.value.jarRefilled(outcome) }
        }
    }

    private func jarRefilled(_ outcome: HandoffOutcome) {
        let refilled = if case .session = outcome { true } else { false }
        switch machine.jarRefilled(refilled) {
        case .ignore:
            return
        case .startTransfer(let start):
            identity?.cookiesChanged()
            startTransfer(start, token: token)
            exchange.resumeRequestBody()
        case .refuse:
            guard case .failed(let document, let fields) = outcome else { return }
            handler.logger.warning("handoff failed", metadata: ["route": .string(route.name), "detail": .string(document.message)])
            answer(document, extraFields: fields)
        }
    }
}
