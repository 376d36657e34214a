import Foundation
import LatchkeyHTTP
import Testing
@testable import LatchkeyUpstream

/// libcurl's cookie engine behind `CookieJar`: shared by transfers on different loops,
/// RFC 6265 matching and replacement, and the Netscape lines it is kept as.
@Suite(.serialized) struct CookieJarTests {
    /// Answers each request with the Cookie field it got as the body; the path says which
    /// Set-Cookie to send.
    private func cookieServer() throws -> TestServer {
        try TestServer { connection in
            while let received = connection.readRequest() {
                let path = String(received.requestLine.split(separator: " ")[1])
                let setCookies: [String] = switch path {
                case "/login": ["sid=abc; Path=/", "scoped=1; Path=/private", "gone=1; Path=/; Max-Age=0"]
                case "/replace": ["sid=xyz; Path=/"]
                default: []
                }
                let body = received.values("cookie").joined(separator: " | ")
                let head = setCookies.map { "Set-Cookie: \($0)\r\n" }.joined()
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\(head)\r\n\(body)")
            }
        }
    }

    private func get(_ harness: UpstreamHarness, _ url: String, jar: CookieJar?, cookie: String? = nil) async -> Outcome {
        var fields: HTTPFields = ["Host": "app.test"]
        if let cookie { fields.append(name: "Cookie", value: cookie) }
        return await harness.perform(UpstreamRequest(method: "GET", url: url, fields: fields, cookieJar: jar))
    }

    @Test func transfersOnDifferentLoopsShareOneJar() async throws {
        let server = try cookieServer()
        let jar = try CookieJar()
        let first = try UpstreamHarness(), second = try UpstreamHarness()
        _ = await get(first, server.baseURL + "/login", jar: jar)
        // The other loop sends what the first received, in one Cookie field with the
        // request's own; the cookie of another path stays home, the expired one is gone.
        let echoed = await get(second, server.baseURL + "/page", jar: jar, cookie: "mine=1")
        let scoped = await get(second, server.baseURL + "/private/x", jar: jar)
        // A request without the jar sends none of it, even on a handle that had one.
        let plain = await get(first, server.baseURL + "/page", jar: nil)
        await first.shutDown()
        await second.shutDown()

        #expect(echoed.bodyText == "sid=abc; mine=1")
        #expect(scoped.bodyText.contains("scoped=1") && scoped.bodyText.contains("sid=abc"))
        #expect(plain.bodyText == "")
    }

    @Test func aCookieReplacesTheOneOfTheSameNameAndTheJarTravelsAsLines() async throws {
        let server = try cookieServer()
        let jar = try CookieJar()
        let harness = try UpstreamHarness()
        _ = await get(harness, server.baseURL + "/login", jar: jar)
        _ = await get(harness, server.baseURL + "/replace", jar: jar)
        let lines = jar.lines()
        #expect(lines.count == 2)
        #expect(lines.contains { $0.hasSuffix("\tsid\txyz") })
        #expect(!lines.contains { $0.contains("\tgone\t") })

        // Restored into another jar (a restart), the session goes on.
        let restored = try CookieJar()
        restored.restore(lines)
        #expect(await get(harness, server.baseURL + "/page", jar: restored).bodyText == "sid=xyz")
        restored.clear()
        #expect(restored.lines().isEmpty)
        #expect(await get(harness, server.baseURL + "/page", jar: restored).bodyText == "")
        await harness.shutDown()
    }
}
