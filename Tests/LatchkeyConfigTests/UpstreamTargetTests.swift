import LatchkeyConfig
import Testing

/// An upstream URL taken apart: scheme, authority and base path.
@Suite struct UpstreamTargetTests {
    @Test(arguments: [
        ("http://api.example", "http", "api.example", ""),
        ("HTTPS://api.example:8443/v1/", "https", "api.example:8443", "/v1"),
        ("http://127.0.0.1:9000/base//", "http", "127.0.0.1:9000", "/base"),
        ("http://[::1]:8080/", "http", "[::1]:8080", ""),
        ("https://api.example/a:b/c", "https", "api.example", "/a:b/c"),
        ("http://h\u{e9}.example/caf\u{e9}", "http", "h\u{e9}.example", "/caf\u{e9}"),
    ])
    func partsOfAURL(url: String, scheme: String, authority: String, basePath: String) throws {
        let target = try #require(UpstreamTarget(url: url))
        #expect(target.scheme == scheme)
        #expect(target.authority == authority)
        #expect(target.basePath == basePath)
        #expect(target.origin == scheme + "://" + authority)
    }

    @Test(arguments: ["", "api.example", "ftp://api.example", "http://", "http:///path", "http:/api.example", "ws:x://api.example", "://api.example"])
    func notAnUpstream(url: String) {
        #expect(UpstreamTarget(url: url) == nil)
    }
}
