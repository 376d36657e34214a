/// A route's handoff endpoint (the Basecamp way of giving a web view a session): an
/// endpoint of the app that takes the identity's credential and answers with the web
/// session's `Set-Cookie`. Latchkey calls it for a browser navigation that the upstream
/// answers 401, and hands the cookies to the browser.
public struct HandoffConfig: Sendable, Equatable {
    /// Absolute http(s) URL; a path in the file is resolved against the route's upstream.
    public var url: String
    public var method: String
    /// Statuses that mean "here is the session"; empty means any 2xx.
    public var expectedStatuses: Set<Int>
    /// Hand off before a browser's first page on the route too, not only after a 401.
    public var beforeFirstPage: Bool

    public init(url: String, method: String = "POST", expectedStatuses: Set<Int> = [], beforeFirstPage: Bool = false) {
        self.url = url
        self.method = method
        self.expectedStatuses = expectedStatuses
        self.beforeFirstPage = beforeFirstPage
    }

    public func expects(status: Int) -> Bool {
        expectedStatuses.isEmpty ? (200..<300).contains(status) : expectedStatuses.contains(status)
    }
}
