import LatchkeyConfig
import LatchkeyHTTP

/// One of a route's injections, made with the route. A class: a request reads it in place,
/// where a copy of the `Injection` would retain and release its eight strings and arrays.
final class RouteInjection: Sendable {
    let config: Injection
    /// The header line it sets, prepared with all but the credential; nil for one that
    /// goes into the query or a cookie.
    let headerLine: PreparedFieldLine?

    init(_ config: Injection) {
        self.config = config
        headerLine = if case .header(let name) = config.target {
            PreparedFieldLine(name: name, valuePrefix: config.template.prefix, valueSuffix: config.template.suffix)
        } else {
            nil
        }
    }
}
