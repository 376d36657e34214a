import LatchkeyHTTP
import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct ResponseRewriterTests {
    private func rewriter(prefix: String = "/gh", upstream: String = "https://api.example/v3", replacement: String? = "",
                          cookies: CookieRewrite = .init(), loopback: Bool = true, tls: Bool = false) -> ResponseRewriter {
        let config = Config(listeners: [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080))],
                            routes: [RouteConfig(name: "r", pathPrefix: prefix, upstream: UpstreamConfig(url: upstream),
                                                 prefixReplacement: replacement, cookies: cookies)])
        let route = RouteTable(config: config).match(listener: 0, path: Substring(prefix), host: nil)!
        return ResponseRewriter(route: route, clientHost: "127.0.0.1:8080", clientOnLoopback: loopback, clientUsesTLS: tls)
    }

    @Test func absoluteLocationOnTheUpstreamPointsBackAtTheProxy() {
        #expect(rewriter().rewriteLocation("https://api.example/v3/users/1?x=y") == "http://127.0.0.1:8080/gh/users/1?x=y")
        #expect(rewriter().rewriteLocation("HTTPS://API.EXAMPLE/v3") == "http://127.0.0.1:8080/gh")
    }

    @Test func relativeLocationUnderTheBasePathIsMapped() {
        #expect(rewriter().rewriteLocation("/v3/users") == "/gh/users")
    }

    @Test func foreignLocationsAreLeftAlone() {
        #expect(rewriter().rewriteLocation("https://other.example/v3/x") == "https://other.example/v3/x")
        #expect(rewriter().rewriteLocation("https://api.example/elsewhere") == "https://api.example/elsewhere")
        #expect(rewriter().rewriteLocation("https://api.example.evil/v3") == "https://api.example.evil/v3")
        #expect(rewriter().rewriteLocation("//api.example/v3") == "//api.example/v3")
        #expect(rewriter().rewriteLocation("relative/path") == "relative/path")
    }

    @Test func setCookieDomainRemovedAndPathMapped() {
        let out = rewriter().rewriteSetCookie("sid=abc; Domain=api.example; Path=/v3/app; HttpOnly; Secure")
        #expect(out == "sid=abc; Path=/gh/app; HttpOnly; Secure")
    }

    @Test func setCookiePathOutsideTheRouteFallsBackToThePrefix() {
        #expect(rewriter().rewriteSetCookie("a=1; Path=/") == "a=1; Path=/gh")
    }

    @Test func secureDroppedOnlyForLoopbackWhenConfigured() {
        let cookies = CookieRewrite(domain: .map("proxy.local"), mapPath: false, dropSecureOnLoopback: true)
        #expect(rewriter(cookies: cookies).rewriteSetCookie("a=1; Domain=x; Secure") == "a=1; Domain=proxy.local")
        #expect(rewriter(cookies: cookies, loopback: false).rewriteSetCookie("a=1; Secure") == "a=1; Secure")
    }

    @Test func overTLSSecureIsKeptAndLinksPointAtHTTPS() {
        let cookies = CookieRewrite(domain: .remove, mapPath: false, dropSecureOnLoopback: true)
        #expect(rewriter(cookies: cookies, tls: true).rewriteSetCookie("a=1; Secure") == "a=1; Secure")
        #expect(rewriter(tls: true).rewriteLocation("https://api.example/v3/users/1") == "https://127.0.0.1:8080/gh/users/1")
    }

    @Test func rewriteTouchesOnlyLinkAndCookieFields() {
        var fields: HTTPFields = [HTTPField(name: "location", value: "https://api.example/v3/a"),
                                  HTTPField(name: "X-Other", value: "https://api.example/v3/a")]
        rewriter().rewrite(&fields)
        #expect(fields["Location"] == "http://127.0.0.1:8080/gh/a")
        #expect(fields["X-Other"] == "https://api.example/v3/a")
    }
}

@Suite struct ResponseRewriterQueryTests {
    @Test func injectedQueryParametersAreDroppedFromRedirects() {
        let config = Config(listeners: [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080))],
                            routes: [RouteConfig(name: "r", pathPrefix: "/", upstream: UpstreamConfig(url: "https://api.example"),
                                                 injections: [Injection(target: .query("api_key"), source: .credential("k"), template: CredentialTemplate())])])
        let route = RouteTable(config: config).match(listener: 0, path: "/", host: nil)!
        let rewriter = ResponseRewriter(route: route, clientHost: "127.0.0.1:8080", clientOnLoopback: true, clientUsesTLS: false)
        #expect(rewriter.rewriteLocation("https://api.example/movie/?api_key=s3cret&page=2") == "http://127.0.0.1:8080/movie/?page=2")
        #expect(rewriter.rewriteLocation("/movie/?api_key=s3cret") == "/movie/")
        #expect(rewriter.rewriteLocation("/movie/?page=2") == "/movie/?page=2")
    }
}
