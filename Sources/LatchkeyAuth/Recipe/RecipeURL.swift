/// A step's URL resolved against the recipe's `base_url` (RFC 3986 §5.2), with the base
/// read as a directory, as a route's upstream base path is: `authentication/token/new`
/// against `https://api.themoviedb.org/3` is
/// `https://api.themoviedb.org/3/authentication/token/new`.
enum RecipeURL {
    /// The absolute http(s) URL `reference` names; nil when it is relative with no base, or
    /// the result is not an http(s) URL with a host.
    static func resolve(_ reference: String, against base: String?) -> String? {
        if hasScheme(reference) { return isHTTP(reference) ? reference : nil }
        guard let base, isHTTP(base), let origin = origin(of: base) else { return nil }
        // RFC 3986 §5.2.2: a network-path reference keeps only the scheme.
        if reference.hasPrefix("//") {
            let url = scheme(of: base) + ":" + reference
            return isHTTP(url) ? url : nil
        }
        var basePath = String(withoutQuery(base).dropFirst(origin.count))
        if !basePath.hasSuffix("/") { basePath += "/" }
        let (path, rest) = splitPath(reference)
        let merged: String = if path.hasPrefix("/") { path } else if path.isEmpty { basePath } else { basePath + path }
        return origin + removingDotSegments(merged) + rest
    }

    /// `url` without its query and fragment: how messages name a step, since a query may
    /// carry a key (TMDB's `api_key`).
    static func withoutQuery(_ url: String) -> Substring {
        url[..<(url.firstIndex { $0 == "?" || $0 == "#" } ?? url.endIndex)]
    }

    /// RFC 3986 §3.1: `scheme ":"` before any `/`, `?` or `#`.
    private static func hasScheme(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { return false }
        return text[..<colon].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
            && text.first!.isLetter
    }

    private static func isHTTP(_ url: String) -> Bool {
        let scheme = scheme(of: url)
        return (scheme == "http" || scheme == "https") && origin(of: url).map { $0.count > scheme.count + 3 } == true
    }

    private static func scheme(of url: String) -> String {
        String(url.prefix { $0 != ":" }).lowercased()
    }

    /// `scheme://authority`, nil without `//`.
    private static func origin(of url: String) -> String? {
        guard let start = url.firstRange(of: "://") else { return nil }
        let rest = url[start.upperBound...]
        return String(url[..<(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)])
    }

    /// The path of a relative reference, and its query and fragment.
    private static func splitPath(_ reference: String) -> (path: String, rest: Substring) {
        let path = withoutQuery(reference)
        return (String(path), reference[path.endIndex...])
    }

    /// RFC 3986 §5.2.4, on whole segments.
    private static func removingDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (index, segment) in segments.enumerated() {
            let last = index == segments.count - 1
            switch segment {
            case ".":
                if last { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if last { output.append("") }
            default:
                output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }
}
