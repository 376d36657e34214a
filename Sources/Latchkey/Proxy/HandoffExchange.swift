#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer

/// A browser's handoff: the route's handoff endpoint is called, and the browser gets its
/// cookies, rewritten for the proxy's origin, with a 303 back to the page it asked for
/// (RFC 9110 §15.4.4: the page is then loaded with GET). A failure is an HTML error page
/// saying what failed: the browser shows it instead of the page. Lives on one loop.
final class HandoffExchange: ExchangeHandler {
    let exchange: ServerExchange
    let route: Route
    let handoff: HandoffConfig
    /// The loop's handler outlives every exchange on it.
    unowned(unsafe) let handler: ProxyHandler
    /// The configuration the request started with, kept to its end through any reload.
    let context: ProxyContext
    /// Where the browser goes once it has the cookies: a request target on this proxy.
    let destination: String
    private let rewriter: ResponseRewriter
    private var done = false

    init(exchange: ServerExchange, route: Route, handoff: HandoffConfig, handler: ProxyHandler, context: ProxyContext, destination: String,
         rewriter: ResponseRewriter) {
        self.exchange = exchange
        self.route = route
        self.handoff = handoff
        self.handler = handler
        self.context = context
        self.destination = destination
        self.rewriter = rewriter
    }

    /// Calls the endpoint; the answer comes back on this loop.
    func start(caller: HandoffCaller, identity: Identity?, credentials: CredentialSnapshot) {
        handler.logger.info("handing a web session to a browser", metadata: ["route": .string(route.name)])
        let this = LoopBound(self)
        let loop = handler.loop.handle
        caller.call(route: route, handoff: handoff, identity: identity, credentials: credentials) { outcome in
            loop.execute { _ in this.value.finished(outcome) }
        }
    }

    private func finished(_ outcome: HandoffOutcome) {
        guard !done else { return }
        switch outcome {
        case .session(let cookies):
            var fields = HTTPFields()
            fields.append(name: .location, value: destination)
            fields.append(name: "Cache-Control", value: "no-store")
            for cookie in cookies { fields.append(name: .setCookie, value: rewriter.rewriteHandoffCookie(cookie)) }
            do {
                let mark = try context.handoffMarks.guardCookie(route: route, target: destination, secure: rewriter.clientUsesTLS, now: Date())
                fields.append(name: .setCookie, value: mark)
            } catch {
                return fail(ErrorDocument(status: 500, error: "handoff_failed", message: "cannot sign the handoff's mark: \(error)",
                                          route: route.name))
            }
            if handoff.beforeFirstPage { fields.append(name: .setCookie, value: HandoffMarks.handedOffCookie(route: route, secure: rewriter.clientUsesTLS)) }
            done = true
            handler.conclude(exchange, .answered(status: 303, fields: fields, outcome: "handoff"), route: route, in: context)
        case .failed(let document, let extraFields):
            handler.logger.warning("handoff failed", metadata: ["route": .string(route.name), "detail": .string(document.message)])
            fail(document, extraFields: extraFields)
        }
    }

    /// The error page instead of the session.
    func fail(_ document: ErrorDocument, extraFields: HTTPFields = HTTPFields()) {
        done = true
        handler.conclude(exchange, .refused(document, extraFields: extraFields, form: .page, outcome: document.error), route: route, in: context)
    }

    // MARK: ExchangeHandler

    /// A navigation has no body worth keeping: whatever comes is dropped.
    func requestBody(_ bytes: UnsafeRawBufferPointer) {}
    func requestBodyEnded() {}
    func responseDrained() {}

    func exchangeAborted(_ reason: ExchangeEnd) {
        guard !done else { return }
        done = true
        guard case .clientGone = reason else { return }
        handler.conclude(exchange, .clientGone(upstreamTime: nil), route: route, in: context)
    }
}
