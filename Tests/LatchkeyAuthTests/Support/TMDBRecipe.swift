import LatchkeyConfig
@testable import LatchkeyAuth

/// TheMovieDB's session as a recipe, built as the validator builds it from the README's
/// configuration: a request token, its validation with the user's login, then a session.
enum TMDBRecipe {
    static let identity = "tmdb-user"
    static let key = "k-4f1e9a"
    static let username = "moviefan"
    static let password = "pw-77#secret"

    static func template(_ text: String) -> RecipeTemplate {
        try! RecipeTemplate(parsing: text)
    }

    static let apiKey = RecipeField(name: "api_key", value: template("{credentials.tmdb-key}"))
    static let success = JSONFieldMatch(path: try! JSONPath(parsing: "success"), value: .bool(true))

    static func recipe(baseURL: String = "https://api.themoviedb.org/3", expiry: RecipeExpiry = .never) -> Recipe {
        Recipe(
            baseURL: baseURL,
            secrets: [RecipeSecret(name: "username", source: .inline(username)), RecipeSecret(name: "password", source: .inline(password))],
            credentials: [RecipeSecret(name: "tmdb-key", source: .inline(key))],
            steps: [
                RecipeStep(
                    name: "request_token",
                    request: RecipeRequest(method: "GET", url: template("authentication/token/new"), query: [apiKey]),
                    expect: RecipeExpectation(statuses: [200], fields: [success]),
                    captures: [RecipeCapture(name: "request_token", source: .json(try! JSONPath(parsing: "request_token")))]),
                RecipeStep(
                    name: "validate_with_login",
                    request: RecipeRequest(method: "POST", url: template("authentication/token/validate_with_login"), query: [apiKey],
                                           body: .json(.object([("username", .string(template("{secrets.username}"))),
                                                                ("password", .string(template("{secrets.password}"))),
                                                                ("request_token", .string(template("{request_token}")))]))),
                    expect: RecipeExpectation(statuses: [200], fields: [success])),
                RecipeStep(
                    name: "session",
                    request: RecipeRequest(method: "POST", url: template("authentication/session/new"), query: [apiKey],
                                           body: .json(.object([("request_token", .string(template("{request_token}")))]))),
                    expect: RecipeExpectation(statuses: [200], fields: [success]),
                    captures: [RecipeCapture(name: "session_id", source: .json(try! JSONPath(parsing: "session_id")))]),
            ],
            logout: RecipeStep(
                name: "logout",
                request: RecipeRequest(method: "DELETE", url: template("authentication/session"), query: [apiKey],
                                       body: .json(.object([("session_id", .string(template("{session_id}")))])))),
            expiry: expiry)
    }

    static func config(_ recipe: Recipe = recipe()) -> IdentityConfig {
        IdentityConfig(name: identity, grant: .recipe(recipe))
    }

    /// The identity's secrets where `IdentityConfig.secretEntries` puts them.
    static func secrets(password: String = password) -> CredentialSnapshot {
        CredentialSnapshot(generation: 0, values: [
            IdentityConfig.secretName(identity: identity, "secret:username"): username,
            IdentityConfig.secretName(identity: identity, "secret:password"): password,
            IdentityConfig.secretName(identity: identity, "credential:tmdb-key"): key,
        ])
    }

    static func values(captures: [String: String] = [:], answers: [String: String] = [:], password: String = password) -> RecipeValues {
        RecipeValues(identity: identity, recipe: recipe(), secrets: secrets(password: password), captures: captures, answers: answers)
    }

    /// TMDB's three calls and the logout, as its documentation describes them; `login`
    /// answers validate_with_login (a wrong password is TMDB's 401 with status_code 30).
    static func server(login: @escaping @Sendable (ServerRequest) -> LoopbackServer.Reply = { _ in .json(200, #"{"success":true}"#) },
                       logout: LoopbackServer.Reply = .json(200, #"{"success":true}"#)) throws -> LoopbackServer {
        try LoopbackServer { request in
            let path = String(request.target.prefix { $0 != "?" })
            guard request.target.hasSuffix("?api_key=\(key)") else { return .json(401, #"{"status_code":7,"success":false}"#) }
            switch (request.method, path) {
            case ("GET", "/3/authentication/token/new"):
                return .json(200, #"{"success":true,"expires_at":"2016-08-26 17:04:39 UTC","request_token":"rt-1"}"#)
            case ("POST", "/3/authentication/token/validate_with_login"):
                return login(request)
            case ("POST", "/3/authentication/session/new"):
                guard request.bodyText == #"{"request_token":"rt-1"}"# else { return .json(401, #"{"success":false}"#) }
                return .json(200, #"{"success":true,"session_id":"sess-79"}"#)
            case ("DELETE", "/3/authentication/session"):
                return logout
            default:
                return .json(404, #"{"success":false,"status_code":34}"#)
            }
        }
    }
}
