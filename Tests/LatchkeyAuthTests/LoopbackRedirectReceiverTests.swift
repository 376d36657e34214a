import Foundation
import LatchkeyLoop
import LatchkeyTestSupport
import Synchronization
import Testing
@testable import LatchkeyAuth
#if canImport(Glibc)
import Glibc
#endif

/// The redirect receiver over a real loopback socket, driven by a scripted browser.
@Suite struct LoopbackRedirectReceiverTests {
    private func request(_ receiver: LoopbackRedirectReceiver) -> AuthorizationRequest {
        AuthorizationRequest(authorizationEndpoint: "https://idp.example/authorize", clientID: "cli",
                             redirectURI: receiver.redirectURI, state: "state-7f3a", codeChallenge: "challenge")
    }

    private func expectClosed(_ port: UInt16) {
        #expect(throws: LoopbackClient.ConnectError(errno: ECONNREFUSED)) { close(try LoopbackClient.connect(port: port)) }
    }

    @Test func theRedirectGivesTheCodeAndThePortCloses() async throws {
        let receiver = try LoopbackRedirectReceiver()
        #expect(receiver.port != 0)
        #expect(receiver.redirectURI == "http://127.0.0.1:\(receiver.port)/callback")
        async let code = receiver.code(for: request(receiver), timeout: .seconds(10))
        let answer = try await ScriptedBrowser.get("/callback?code=c0de-9x&state=state-7f3a", port: receiver.port)
        #expect(try await code == "c0de-9x")
        #expect(answer.status == 200)
        #expect(answer.text.contains("Content-Type: text/html; charset=utf-8"))
        #expect(answer.text.contains("You may close this window"))
        #expect(!answer.text.contains("c0de-9x") && !answer.text.contains("state-7f3a"))
        expectClosed(receiver.port)
    }

    @Test func unrelatedRequestsGetAnAnswerAndTheWaitGoesOn() async throws {
        let receiver = try LoopbackRedirectReceiver(path: "/oauth/done")
        #expect(receiver.redirectURI.hasSuffix("/oauth/done"))
        async let code = receiver.code(for: request(receiver), timeout: .seconds(10))
        #expect(try await ScriptedBrowser.get("/favicon.ico", port: receiver.port).status == 404)
        #expect(try await ScriptedBrowser.get("/callback?code=c&state=state-7f3a", port: receiver.port).status == 404)
        #expect(try await ScriptedBrowser.get("/oauth/done?code=c&state=state-7f3a", port: receiver.port, method: "POST").status == 405)
        #expect(try await ScriptedBrowser.send("GET /oauth/done HTTP/1.1\r\n\r\n", port: receiver.port).status == 400)  // no Host
        #expect(try await ScriptedBrowser.get("/oauth/done?state=state-7f3a&code=right", port: receiver.port).status == 200)
        #expect(try await code == "right")
    }

    /// RFC 6749 §10.12: a redirect of another attempt, or a forged one, is refused and
    /// reported; the login's own redirect still completes it.
    @Test func aRedirectWithAnotherStateIsRefused() async throws {
        let receiver = try LoopbackRedirectReceiver()
        let notices = Mutex<[String]>([])
        async let code = receiver.code(for: request(receiver), timeout: .seconds(10)) { notice in notices.withLock { $0.append(notice) } }
        let forged = try await ScriptedBrowser.get("/callback?code=forged&state=state-7f3b", port: receiver.port)
        #expect(forged.status == 400 && forged.text.contains("does not belong to the login"))
        #expect(try await ScriptedBrowser.get("/callback?code=forged", port: receiver.port).status == 400)
        #expect(try await ScriptedBrowser.get("/callback?code=genuine&state=state-7f3a", port: receiver.port).status == 200)
        #expect(try await code == "genuine")
        #expect(notices.withLock { $0 } == Array(repeating: "ignored a request to the redirect URI whose state does not match this login", count: 2))
    }

    /// RFC 6749 §4.1.2.1: the user said no.
    @Test func anErrorRedirectEndsTheLogin() async throws {
        let receiver = try LoopbackRedirectReceiver()
        let login = Task { try await receiver.code(for: request(receiver), timeout: .seconds(10)) }
        let answer = try await ScriptedBrowser.get(
            "/callback?error=access_denied&error_description=%3Cb%3ENo%3C%2Fb%3E+thanks&state=state-7f3a", port: receiver.port)
        await #expect(throws: LoginError.refused(error: "access_denied", description: "<b>No</b> thanks")) { try await login.value }
        #expect(answer.status == 400)
        #expect(answer.text.contains("refused the login with access_denied: &lt;b&gt;No&lt;/b&gt; thanks"))
        expectClosed(receiver.port)
    }

    @Test func aRedirectWithoutCodeEndsTheLogin() async throws {
        let receiver = try LoopbackRedirectReceiver()
        let login = Task { try await receiver.code(for: request(receiver), timeout: .seconds(10)) }
        #expect(try await ScriptedBrowser.get("/callback?state=state-7f3a", port: receiver.port).status == 400)
        await #expect(throws: LoginError.missingCode) { try await login.value }
    }

    /// Browsers open connections ahead of need and send nothing on some.
    @Test func anIdleConnectionDoesNotHoldUpTheRedirect() async throws {
        let receiver = try LoopbackRedirectReceiver()
        async let code = receiver.code(for: request(receiver), timeout: .seconds(10))
        let idle = try LoopbackClient.connect(port: receiver.port)
        defer { close(idle) }
        #expect(try await ScriptedBrowser.get("/callback?code=c&state=state-7f3a", port: receiver.port).status == 200)
        #expect(try await code == "c")
    }

    @Test func noRedirectInTimeIsATimeout() async throws {
        let receiver = try LoopbackRedirectReceiver()
        let started = ContinuousClock.now
        await #expect(throws: LoginError.timedOut(.milliseconds(300))) {
            try await receiver.code(for: request(receiver), timeout: .milliseconds(300))
        }
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        expectClosed(receiver.port)
    }

    /// Ctrl-C cancels the login's task: the listener must not outlive it.
    @Test func cancellationClosesTheListener() async throws {
        let receiver = try LoopbackRedirectReceiver()
        let task = Task { try await receiver.code(for: request(receiver), timeout: .seconds(30)) }
        #expect(try await ScriptedBrowser.get("/favicon.ico", port: receiver.port).status == 404)  // serving now
        task.cancel()
        await #expect(throws: LoginError.cancelled) { try await task.value }
        expectClosed(receiver.port)
    }

    @Test func aTakenPortIsAClearError() throws {
        let first = try LoopbackRedirectReceiver()
        let error = #expect(throws: LoginError.self) { try LoopbackRedirectReceiver(port: first.port) }
        #expect(error == .cannotListen(port: first.port, SystemError(call: "bind", errno: EADDRINUSE)))
        #expect(error?.message == "cannot listen for the redirect on 127.0.0.1:\(first.port): bind: Address already in use")
    }
}
