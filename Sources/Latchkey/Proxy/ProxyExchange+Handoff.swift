#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyServer
import LatchkeyUpstream

extension ProxyExchange {
    /// The upstream answered a browser's navigation with 401 on a route with a handoff: the
    /// browser is handed the web session and sent back to the page, once. A page that still
    /// answers 401 with the handoff's guard present gets an error page instead, so that a
    /// session the app does not accept cannot make a redirect loop.
    func handOff(after refused: UpstreamTransfer, settings: HandoffConfig, caller: HandoffCaller) {
        refused.cancel()
        transfer = nil
        done = true
        let head = exchange.head
        if handler.context.handoffMarks.isGuarded(head.fields, route: route, target: head.target, now: Date()) {
            handler.logger.warning("page refused after a handoff", metadata: ["route": .string(route.name)])
            return handler.answerWithPage(
                exchange,
                ErrorDocument(status: 502, error: "handoff_failed",
                              message: "the page still answered 401 after a handoff: the session the handoff endpoint gave does not open it",
                              route: route.name),
                route: route)
        }
        let handoff = HandoffExchange(exchange: exchange, route: route, handoff: settings, handler: handler,
                                      destination: head.target, rewriter: rewriter)
        self.handoff = handoff
        handoff.start(caller: caller, identity: identity, credentials: blueprint.credentials)
    }
}
