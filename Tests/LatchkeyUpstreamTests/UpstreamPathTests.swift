import Testing
@testable import LatchkeyUpstream

/// Which routes Latchkey frames itself, and which keep libcurl's full transfers.
struct UpstreamPathTests {
    @Test func plainAndTLSUpstreamsOverHTTP1AreLatchkeys() {
        #expect(UpstreamPath(url: "http://up:8080/api", options: UpstreamOptions(), cookieJar: false) == .http1)
        let mutualTLS = UpstreamOptions(caFile: "ca.pem", clientCertificateFile: "c.pem", clientKeyFile: "k.pem")
        #expect(UpstreamPath(url: "HTTPS://up/", options: mutualTLS, cookieJar: false) == .http1)
        #expect(UpstreamPath(url: "https://up/", options: UpstreamOptions(proxy: "http://proxy:3128"), cookieJar: false) == .http1)
        #expect(UpstreamPath(url: "http://up/", options: UpstreamOptions(proxy: "socks5h://proxy:1080"), cookieJar: false) == .http1)
    }

    @Test func whatOnlyLibcurlGivesStaysWithIt() {
        #expect(UpstreamPath(url: "https://up/", options: UpstreamOptions(http2: true), cookieJar: false) == .curl)
        #expect(UpstreamPath(url: "https://up/", options: UpstreamOptions(), cookieJar: true) == .curl)
        #expect(UpstreamPath(url: "http://up/", options: UpstreamOptions(proxy: "proxy:3128"), cookieJar: false) == .curl)
        #expect(UpstreamPath(url: "ftp://up/", options: UpstreamOptions(), cookieJar: false) == .curl)
    }

    @Test func aRouteMayAskForLibcurl() {
        #expect(UpstreamPath(url: "https://up/", options: UpstreamOptions(), cookieJar: false, forcesCurl: true) == .curl)
    }
}
