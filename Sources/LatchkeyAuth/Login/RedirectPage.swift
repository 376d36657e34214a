import LatchkeyHTTP

/// What the browser shows once it has come back to the loopback redirect: a short HTML page
/// saying how the login went and that the window may be closed. The only outside text it
/// holds is the authorization server's error, HTML-escaped; never the code or the state.
struct RedirectPage: Sendable, Equatable {
    var status: Int
    var title: String
    var message: String

    static let loggedIn = RedirectPage(
        status: 200, title: "Logged in",
        message: "Latchkey has received the login. You may close this window and go back to the terminal.")

    static let notThisLogin = RedirectPage(
        status: 400, title: "Not this login",
        message: "This redirect does not belong to the login Latchkey is waiting for (its state does not match). "
            + "Nothing was done with it.")

    static let notFound = RedirectPage(
        status: 404, title: "Not found", message: "Latchkey is only waiting for the login's redirect here.")

    static let methodNotAllowed = RedirectPage(
        status: 405, title: "Method not allowed", message: "The login's redirect is a GET request.")

    static func failed(_ error: LoginError) -> RedirectPage {
        RedirectPage(status: 400, title: "Login failed",
                     message: "The login failed: \(error.message). You may close this window.")
    }

    /// The page, answered with `fields`.
    var body: [UInt8] {
        Array("""
            <!DOCTYPE html>
            <html><head><meta charset="utf-8"><title>Latchkey: \(HTMLText.escape(title))</title></head>
            <body><h1>\(HTMLText.escape(title))</h1><p>\(HTMLText.escape(message))</p></body></html>

            """.utf8)
    }

    /// The server adds the length and closes the connection after it.
    var fields: HTTPFields {
        var fields = HTTPFields()
        fields.append(name: "Content-Type", value: "text/html; charset=utf-8")
        fields.append(name: "Cache-Control", value: "no-store")
        // The page loads nothing and links nowhere: the URL that led here holds the code.
        fields.append(name: "Content-Security-Policy", value: "default-src 'none'")
        fields.append(name: "Referrer-Policy", value: "no-referrer")
        return fields
    }
}
