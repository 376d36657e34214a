import LatchkeyHTTP

/// What one request to the loopback listener means for the login.
enum RedirectVerdict: Equatable {
    /// Not the login's redirect: answer the page and go on waiting. `notice` says what
    /// was ignored when the user should hear of it.
    case ignore(RedirectPage, notice: String?)
    /// The login's redirect: answer the page, then end with `result`.
    case finish(RedirectPage, Result<String, LoginError>)

    init(_ head: RequestHead, path: String, request: AuthorizationRequest) {
        let target = head.target
        guard target.prefix(while: { $0 != "?" }) == path else {
            self = .ignore(.notFound, notice: nil)
            return
        }
        guard head.method == "GET" else {
            self = .ignore(.methodNotAllowed, notice: nil)
            return
        }
        do {
            self = .finish(.loggedIn, .success(try request.code(fromRedirect: target)))
        } catch {
            let failure: LoginError
            switch error {
            case .stateMismatch:
                self = .ignore(.notThisLogin, notice: "ignored a request to the redirect URI whose state does not match this login")
                return
            case .refused(let code, let description):
                failure = .refused(error: code, description: description)
            case .missingCode:
                failure = .missingCode
            }
            self = .finish(.failed(failure), .failure(failure))
        }
    }
}
