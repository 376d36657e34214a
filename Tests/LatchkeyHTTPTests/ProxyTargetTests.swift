import LatchkeyHTTP
import Testing

@Suite struct ProxyTargetTests {
    @Test func originFormAddressesTheProxy() {
        #expect(ProxyTarget(method: "GET", target: "/x?y") == .origin)
    }

    @Test func absoluteFormKeepsPathAndQueryAndLowerCasesTheHost() {
        #expect(ProxyTarget(method: "GET", target: "http://API.Example.com/repos/a?page=2")
            == .absolute(scheme: .http, authority: TargetAuthority(host: "api.example.com", port: 80), path: "/repos/a?page=2"))
        #expect(ProxyTarget(method: "POST", target: "HTTPS://api.example.com:8443")
            == .absolute(scheme: .https, authority: TargetAuthority(host: "api.example.com", port: 8443), path: "/"))
        #expect(ProxyTarget(method: "GET", target: "http://api.example.com?q=1")
            == .absolute(scheme: .http, authority: TargetAuthority(host: "api.example.com", port: 80), path: "/?q=1"))
    }

    @Test func ipv6LiteralsLoseTheirBracketsAndGetThemBackInURLs() throws {
        guard case .absolute(_, let authority, _) = try #require(ProxyTarget(method: "GET", target: "http://[::1]:8080/")) else {
            Issue.record("not absolute-form")
            return
        }
        #expect(authority.host == "::1")
        #expect(authority.description == "[::1]:8080")
        #expect(authority.hostForURL == "[::1]")
    }

    @Test func connectTakesTheAuthorityFormOnlyWithAPort() {
        #expect(ProxyTarget(method: "CONNECT", target: "api.example.com:443") == .authority(TargetAuthority(host: "api.example.com", port: 443)))
        #expect(ProxyTarget(method: "CONNECT", target: "api.example.com") == nil)
        #expect(ProxyTarget(method: "CONNECT", target: "/x") == nil)
        #expect(ProxyTarget(method: "CONNECT", target: "http://api.example.com/") == nil)
        #expect(ProxyTarget(method: "GET", target: "api.example.com:443") == nil)
    }

    @Test(arguments: [
        "http://user:pass@api.example.com/", "http://api.example.com/#frag", "http://api.example.com:0/", "http://api.example.com:65536/",
        "http://api.example.com:/", "http://api.example.com:80a/", "ftp://api.example.com/", "http:/api.example.com/", "http:///x",
        "http://[::1/", "http://[]/", "http://a b/", "http://api%2eexample.com/",
    ])
    func malformedTargetsAreRefused(_ target: String) {
        #expect(ProxyTarget(method: "GET", target: target) == nil)
    }
}
