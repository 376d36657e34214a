import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct RequestTargetTests {
    @Test func splitsPathAndQuery() {
        let target = RequestTarget("/a/b?x=1&y=2")
        #expect(target?.path == "/a/b")
        #expect(target?.query == "x=1&y=2")
        #expect(RequestTarget("/a")?.query == nil)
    }

    @Test(arguments: ["/a/../b", "/..", "/a/./b", "/a/%2e%2e/b", "/a/%2E./b", "/a/.%2e", "/%/../x", "/a/%2/./b", "http://x/y", "*", ""])
    func refusesDotSegmentsAndOtherForms(target: String) {
        #expect(RequestTarget(target) == nil)
    }

    @Test(arguments: ["/a/..b", "/a/...", "/.well-known/x", "/a%2eb", "/a/%2e%2e%2e/b", "/a/%2/b", "/a/%", "/a/.%2"])
    func acceptsDotsThatAreNotSegments(target: String) {
        #expect(RequestTarget(target) != nil)
    }

    @Test func hostWithoutPort() {
        #expect(HostAuthority.split("example.com:8080").host == "example.com")
        #expect(HostAuthority.split("[::1]:8080").host == "[::1]")
        #expect(HostAuthority.split("example.com").host == "example.com")
        #expect(HostAuthority.split("[::1]:8080").port == "8080" && HostAuthority.split("[::1]").port == nil)
    }
}
