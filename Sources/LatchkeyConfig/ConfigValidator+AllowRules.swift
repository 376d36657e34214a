extension ConfigValidator {
    static let allowRuleExpectation = "a mapping with path and an optional method, e.g. { method: GET, path: /repos/** }"
    static let allowPathExpectation = "a path pattern starting with '/': '*' within one segment, '**' as a whole segment for any depth, e.g. /repos/**"

    /// `routes[].allow`: the only requests the route forwards. A list that is there must
    /// name at least one: an empty one would refuse everything, which no one means.
    mutating func validateAllowRules(_ route: ConfigMapping) -> [AllowRule] {
        guard let nodes = route.list("allow") else { return [] }
        if nodes.isEmpty {
            diagnostics.error(route.path / "allow", "empty list", expected: Self.allowRuleExpectation + "; omit allow to forward every request")
        }
        return nodes.compactMap { node in
            node.mapping(ConfigKeys.allowRule, expected: Self.allowRuleExpectation).flatMap { validateAllowRule($0) }
        }
    }

    private mutating func validateAllowRule(_ raw: ConfigMapping) -> AllowRule? {
        var method: String?
        var valid = true
        if let text = raw.string("method") {
            if text == "*" {
                diagnostics.error(raw.path / "method", "'*' is not a method", expected: "omit method to allow every method")
                valid = false
            } else if !ConfigSyntax.isToken(text) {
                diagnostics.error(raw.path / "method", "invalid method", expected: "a method such as GET (RFC 9110 §9)")
                valid = false
            } else {
                // Written in any case, compared upper-case: every registered method is.
                method = text.uppercased()
            }
        }
        guard let path = raw.string("path") else {
            diagnostics.error(raw.path, "missing key 'path'", expected: Self.allowPathExpectation)
            return nil
        }
        if let problem = Self.allowPathProblem(path) {
            diagnostics.error(raw.path / "path", problem, expected: Self.allowPathExpectation)
            valid = false
        }
        return valid ? AllowRule(method: method, path: path) : nil
    }

    /// Why `path` is no pattern a request path can be matched with, or nil.
    static func allowPathProblem(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return "must start with '/'" }
        // Matched against the path alone: a query or fragment would never match.
        if path.utf8.contains(where: ConfigSyntax.endsOrBreaksPath) {
            return "contains a space, control character, '?' or '#'"
        }
        let misplaced = path.split(separator: "/", omittingEmptySubsequences: false).contains { $0 != "**" && $0.contains("**") }
        return misplaced ? "'**' must be a whole segment (/a/**/b), not part of one" : nil
    }
}
