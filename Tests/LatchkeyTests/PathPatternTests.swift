import Testing
@testable import Latchkey

@Suite struct PathPatternTests {
    private func matches(_ pattern: String, _ path: String) -> Bool {
        var path = path
        return path.withUTF8 { bytes in PathPattern(pattern).matches(bytes) }
    }

    @Test(arguments: [
        // Literal paths match themselves only.
        ("/user", "/user", true), ("/user", "/user/", false), ("/user", "/users", false), ("/user", "/User", false),
        ("/", "/", true), ("/", "/a", false),
        // ** as a whole segment: the prefix itself and everything under it.
        ("/repos/**", "/repos", true), ("/repos/**", "/repos/", true), ("/repos/**", "/repos/a", true),
        ("/repos/**", "/repos/a/b/c", true), ("/repos/**", "/reposx", false), ("/repos/**", "/repo", false),
        ("/repos/**", "/", false), ("/**", "/", true), ("/**", "/anything/at/all", true),
        ("/**/issues", "/issues", true), ("/**/issues", "/a/b/issues", true), ("/**/issues", "/a/issues/x", false),
        ("/a/**/b", "/a/b", true), ("/a/**/b", "/a/x/y/b", true), ("/a/**/b", "/a/x/y/c", false), ("/a/**/b", "/b", false),
        ("/a/**/b/**", "/a/x/b/y/z", true), ("/a/**/b/**", "/a/x/c/y", false), ("/**/**", "/x", true),
        // * within one segment, never across '/'.
        ("/repos/*", "/repos/a", true), ("/repos/*", "/repos/", true), ("/repos/*", "/repos", false),
        ("/repos/*", "/repos/a/b", false), ("/repos/*/issues", "/repos/latchkey/issues", true),
        ("/repos/*/issues", "/repos/a/b/issues", false), ("/files/*.json", "/files/a.json", true),
        ("/files/*.json", "/files/.json", true), ("/files/*.json", "/files/a.json.txt", false),
        ("/files/*.json", "/files/a/b.json", false), ("/a*b*c", "/aXXbYYbc", true), ("/a*b*c", "/abcb", false),
        ("/*", "/", true), ("/*", "/x/", false),
        // Bytes as sent: nothing is decoded, and a path must start with '/'.
        ("/a%2Fb", "/a%2Fb", true), ("/a/b", "/a%2Fb", false), ("/repos/**", "repos/a", false), ("/**", "", false),
        ("/caf\u{E9}/*", "/caf\u{E9}/x", true),
    ])
    func glob(_ pattern: String, _ path: String, _ expected: Bool) {
        #expect(matches(pattern, path) == expected, "\(pattern) against \(path)")
    }

    /// Many `**` and `*` against a long path: the backtracking stays linear per star.
    @Test func hostilePatternsFinish() {
        let path = "/" + Array(repeating: "a", count: 2_000).joined(separator: "/") + "/b"
        #expect(!matches("/**/**/**/**/c", path))
        #expect(matches("/**/**/**/**/b", path))
        #expect(!matches("/" + String(repeating: "*a", count: 50) + "c", "/" + String(repeating: "a", count: 2_000)))
    }
}
