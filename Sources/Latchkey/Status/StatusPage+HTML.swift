#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyHTTP

// The status page as one self-contained HTML document: no script, no external source, one
// inline stylesheet that the Content-Security-Policy admits by its hash, and a meta refresh
// that reloads it. Every string from the configuration or an event is escaped. Times are
// UTC in ISO 8601 with how far away they are, as `latchkey status` shows them.
extension StatusPage {
    /// Seconds between reloads: the page follows a refresh or a failure as it happens.
    static let refreshSeconds = 5

    /// The response's security fields: nothing but the inline stylesheet may load (the
    /// favicon is the empty `data:,`, so that a browser asks no route for /favicon.ico), no
    /// page may frame this one, and no link leaks its address.
    static let securityFields: [(name: String, value: String)] = [
        ("Content-Security-Policy", "default-src 'none'; style-src \(styleSource); img-src data:; base-uri 'none'; "
            + "form-action 'none'; frame-ancestors 'none'"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Content-Type-Options", "nosniff"),
    ]

    var html: String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta http-equiv="refresh" content="\(Self.refreshSeconds)">
        <link rel="icon" href="data:,">
        <title>Latchkey status</title>
        <style>\(Self.style)</style>
        </head><body>
        <header><h1>Latchkey</h1>
        <p class="meta">started \(moment(startedAt)) · as of \(time(now)) · refreshes every \(Self.refreshSeconds) s</p></header>
        <main>
        <h2>Identities</h2>
        \(identitiesSection)
        <h2>Routes</h2>
        \(routesSection)
        <h2>Recent auth events</h2>
        \(eventsSection)
        </main></body></html>

        """
    }

    private var identitiesSection: String {
        guard !identities.isEmpty else { return #"<p class="empty">No identities are configured.</p>"# }
        return #"<div class="cards">"# + identities.map(card).joined() + "</div>"
    }

    private func card(_ identity: Identity) -> String {
        let status = identity.status
        // A static identity's token is in the configuration: its grant says so.
        var facts = status.source == .static ? [status.grant] : [status.grant, status.source.rawValue]
        if status.hasRefreshToken { facts.append("refresh token") }
        var rows: [(label: String, html: String)] = [
            ("Grant", escape(facts.joined(separator: " · "))),
            ("Expires", status.expiresAt.map(moment) ?? "–"),
            ("Last refresh", status.obtainedAt.map(moment) ?? "–"),
        ]
        if let captures = status.captures, !captures.isEmpty { rows.append(("Captures", escape(captures.joined(separator: ", ")))) }
        if let detail = status.detail { rows.append(("Note", escape(detail))) }
        if let error = identity.lastError {
            let key = error.configKey.map { " <code>\(escape($0))</code>" } ?? ""
            rows.append(("Last error", #"<span class="error">\#(escape(error.message))</span>\#(key)<br>\#(moment(error.at))"#))
        }
        return #"<section class="card"><h3><span class="name">\#(escape(status.name))</span>"#
            + badge(status.state.words, tone: status.state.tone) + "</h3><dl>"
            + rows.map { "<dt>\($0.label)</dt><dd>\($0.html)</dd>" }.joined() + "</dl></section>"
    }

    private var routesSection: String {
        let rows = routes.map { route in
            cells([("Route", escape(route.name)), ("Path", "<code>\(escape(route.pathPrefix))</code>"),
                   ("Upstream", escape(route.upstream)), ("Identity", route.identity.map(identityCell) ?? "–")])
        }
        return table(header: ["Route", "Path", "Upstream", "Identity"], rows: rows)
    }

    /// The identity requests get; the configured one too where `latchkey use` chose another.
    private func identityCell(_ route: RouteStatus) -> String {
        var cell = escape(route.identity)
        if route.identity != route.configured { cell += #" <span class="rel">(configured: \#(escape(route.configured)))</span>"# }
        if let detail = route.detail { cell += #"<br><span class="rel">\#(escape(detail))</span>"# }
        return cell
    }

    private var eventsSection: String {
        guard !events.isEmpty else { return #"<p class="empty">No auth events since the start.</p>"# }
        let rows = events.map { recorded in
            cells([("Time", moment(recorded.at)), ("Identity", escape(recorded.event.identity)),
                   ("Event", badge(recorded.event.kind.rawValue, tone: recorded.event.kind.tone)),
                   ("Detail", recorded.event.detail.map(escape) ?? "")])
        }
        return table(header: ["Time", "Identity", "Event", "Detail"], rows: rows)
    }

    /// A table row; each cell carries its column's name, which a narrow screen shows
    /// beside it instead of the header.
    private func cells(_ cells: [(label: String, html: String)]) -> String {
        "<tr>" + cells.map { #"<td data-label="\#($0.label)">\#($0.html)</td>"# }.joined() + "</tr>"
    }

    private func table(header: [String], rows: [String]) -> String {
        "<table><thead><tr>" + header.map { "<th>\($0)</th>" }.joined() + "</tr></thead><tbody>" + rows.joined() + "</tbody></table>"
    }

    private func badge(_ text: String, tone: Tone) -> String {
        #"<span class="badge \#(tone.rawValue)">\#(escape(text))</span>"#
    }

    private func time(_ date: Date) -> String {
        let text = StatusReport.time(date)
        return #"<time datetime="\#(text)">\#(text)</time>"#
    }

    /// "2026-11-22T09:39:30Z in 58m", the distance muted.
    private func moment(_ date: Date) -> String {
        time(date) + #" <span class="rel">\#(StatusReport.distance(from: now, to: date))</span>"#
    }

    private func escape(_ text: String) -> String {
        HTMLText.escape(text)
    }

    /// How a state or an event is coloured.
    enum Tone: String {
        case good, bad, busy, quiet
    }

    /// Light and dark, readable from a phone's width up (tables turn into labelled rows).
    static let style = """
        :root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#fff;--card:#f6f8fa;--line:#d1d9e0;\
        --good:#1a7f37;--bad:#cf222e;--busy:#0969da;--quiet:#59636e}\
        @media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--card:#151b23;\
        --line:#3d444d;--good:#3fb950;--bad:#f85149;--busy:#4493f8;--quiet:#9198a1}}\
        *{box-sizing:border-box}\
        body{margin:0 auto;max-width:72rem;padding:1rem 1.25rem 2rem;color:var(--fg);background:var(--bg);\
        font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}\
        h1{font-size:1.35rem;margin:0}\
        h2{font-size:1rem;margin:1.75rem 0 .6rem;padding-bottom:.3rem;border-bottom:1px solid var(--line)}\
        .meta,.empty,.rel,dt,th{color:var(--muted)}\
        .meta{margin:.2rem 0 0;font-size:.85rem}\
        .cards{display:grid;gap:.75rem;grid-template-columns:repeat(auto-fill,minmax(20rem,1fr))}\
        .card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem}\
        .card h3{display:flex;justify-content:space-between;align-items:center;gap:.5rem;margin:0 0 .5rem;font-size:1rem}\
        .name,dd,td{overflow-wrap:anywhere}\
        dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem .75rem;margin:0;font-size:.875rem}\
        dd{margin:0}\
        .badge{padding:.05rem .55rem;border:1px solid currentColor;border-radius:1rem;font-size:.75rem;\
        font-weight:600;white-space:nowrap}\
        .good{color:var(--good)}.bad,.error{color:var(--bad)}.busy{color:var(--busy)}.quiet{color:var(--quiet)}\
        table{width:100%;border-collapse:collapse;font-size:.875rem}\
        th{text-align:left;font-weight:600}\
        th,td{padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}\
        code{font:.85em ui-monospace,SFMono-Regular,Menlo,monospace}\
        time{font-variant-numeric:tabular-nums;white-space:nowrap}\
        @media (max-width:40rem){body{padding:.75rem}.cards{grid-template-columns:1fr}thead{display:none}\
        tr{display:block;padding:.4rem 0;border-bottom:1px solid var(--line)}\
        td{display:flex;gap:.75rem;padding:.1rem 0;border:0}td:empty{display:none}\
        td::before{content:attr(data-label);flex:0 0 5.5rem;color:var(--muted)}}
        """

    /// `'sha256-…'` of `style` for the policy (CSP3 §8.4, hash-source): the one stylesheet
    /// admitted. SHA-256 through OpenSSL cannot fail on a constant; if it ever did, the page
    /// would show unstyled rather than admit any other style.
    private static let styleSource: String = {
        guard let digest = try? Digest.sha256(Array(style.utf8)) else { return "'none'" }
        return "'sha256-\(Data(digest).base64EncodedString())'"
    }()
}

extension IdentityStatus.State {
    fileprivate var tone: StatusPage.Tone {
        switch self {
        case .valid: .good
        case .failing, .loginRequired, .misconfigured: .bad
        case .refreshing: .busy
        case .expired, .noToken, .unknown: .quiet
        }
    }
}

extension AuthEvent.Kind {
    fileprivate var tone: StatusPage.Tone {
        switch self {
        case .acquired, .refreshed: .good
        case .failed, .loginRequired: .bad
        case .loggedOut: .quiet
        }
    }
}
