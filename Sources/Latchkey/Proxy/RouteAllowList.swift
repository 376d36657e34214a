import LatchkeyConfig

/// A route's `allow:` list compiled for the hot path: which requests the route forwards.
/// Empty (no `allow:`) permits every request; otherwise a request must match one rule's
/// method and path pattern (PathPattern), and is answered 403 when none does.
struct RouteAllowList: Sendable, Equatable {
    struct Rule: Sendable, Equatable {
        /// Upper-case; nil for any method.
        let method: String?
        let path: PathPattern

        /// RFC 9110 §9.3.2: HEAD asks for what GET would answer, without the body, so a
        /// rule for GET permits HEAD too (as nginx's `limit_except GET` does).
        func permits(method requested: String) -> Bool {
            guard let method else { return true }
            return requested == method || (method == "GET" && requested == "HEAD")
        }
    }

    let rules: [Rule]

    init(_ rules: [AllowRule]) {
        self.rules = rules.map { Rule(method: $0.method, path: PathPattern($0.path)) }
    }

    /// Whether the route forwards `method` (case-sensitive, RFC 9110 §9.1: `get` is not
    /// GET) to `path` (the client's path, without query, before the route's prefix is
    /// replaced). Allocates nothing for a path held in a native string.
    func permits(method: String, path: Substring) -> Bool {
        guard !rules.isEmpty else { return true }
        var path = path
        return path.withUTF8 { bytes in
            rules.contains { $0.permits(method: method) && $0.path.matches(bytes) }
        }
    }
}
