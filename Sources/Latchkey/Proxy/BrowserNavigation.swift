import LatchkeyHTTP

/// Is this request a browser loading a page into a window (as opposed to a script's fetch
/// or an API client)? Only a navigation can follow a handoff's redirect and show an
/// error page.
enum BrowserNavigation {
    /// Fetch metadata's `Sec-Fetch-Mode: navigate` when the browser sends it (a script's
    /// fetch says `cors` or `no-cors` even when it accepts HTML); else an `Accept` that asks
    /// for HTML, as older web views send. Only GET and HEAD: a redirect would lose a
    /// form's body.
    static func isNavigation(_ head: RequestHead) -> Bool {
        guard head.method == "GET" || head.method == "HEAD" else { return false }
        if let mode = head.fields["Sec-Fetch-Mode"] { return mode.lowercased() == "navigate" }
        return head.fields.values(named: "Accept").contains { $0.lowercased().contains("text/html") }
    }
}
