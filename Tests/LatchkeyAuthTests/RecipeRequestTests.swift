import LatchkeyConfig
import LatchkeyUpstream
import Testing
@testable import LatchkeyAuth

/// Templates rendered, URLs resolved and step requests built: no sockets.
@Suite struct RecipeRequestTests {
    private let template = TMDBRecipe.template
    private let steps = TMDBRecipe.recipe().steps

    @Test func templatesTakeCapturesSecretsCredentialsAndPrompts() throws {
        let values = TMDBRecipe.values(captures: ["request_token": "rt-1"], answers: ["otp": "123456"])
        #expect(try values.render(template("{request_token}|{secrets.username}|{credentials.tmdb-key}|{prompts.otp}|{{x}}"))
            == "rt-1|moviefan|k-4f1e9a|123456|{x}")
        // Only the values are encoded: the literal text is written as it is.
        #expect(try values.render(template("a b/{secrets.password}"), encoding: FormEncoding.percentEncode) == "a b/pw-77%23secret")
    }

    @Test func aPlaceholderWithoutAValueIsNamed() {
        let values = TMDBRecipe.values()
        #expect(throws: RecipeValues.Missing.capture("session_id")) { try values.render(template("{session_id}")) }
        #expect(throws: RecipeValues.Missing.secret("pin")) { try values.render(template("{secrets.pin}")) }
        #expect(throws: RecipeValues.Missing.credential("other")) { try values.render(template("{credentials.other}")) }
        #expect(throws: RecipeValues.Missing.prompt("otp")) { try values.render(template("{prompts.otp}")) }
    }

    @Test(arguments: [
        ("authentication/token/new", "https://api.themoviedb.org/3", "https://api.themoviedb.org/3/authentication/token/new"),
        ("authentication/token/new", "https://api.themoviedb.org/3/", "https://api.themoviedb.org/3/authentication/token/new"),
        ("/login", "https://api.example.com/v1", "https://api.example.com/login"),
        ("../v2/login?x=1", "https://api.example.com/v1", "https://api.example.com/v2/login?x=1"),
        ("./a/./b/../c", "http://127.0.0.1:8080", "http://127.0.0.1:8080/a/c"),
        ("//other.example.com/x", "https://api.example.com/v1", "https://other.example.com/x"),
        ("https://auth.example.com/token", "https://api.example.com/v1", "https://auth.example.com/token"),
        ("HTTP://auth.example.com/token", nil, "HTTP://auth.example.com/token"),
    ] as [(String, String?, String)])
    func relativeURLsResolveAgainstTheBaseAsADirectory(_ reference: String, _ base: String?, _ resolved: String) {
        #expect(RecipeURL.resolve(reference, against: base) == resolved)
    }

    @Test func aURLThatIsNotHTTPIsRefused() {
        #expect(RecipeURL.resolve("authentication/token/new", against: nil) == nil)
        #expect(RecipeURL.resolve("ftp://example.com/x", against: "https://api.example.com") == nil)
        #expect(RecipeURL.resolve("x", against: "https://") == nil)
        #expect(RecipeURL.withoutQuery("https://h/p?api_key=k#f") == "https://h/p")
    }

    @Test func theFirstStepIsAGETWithItsQueryEncoded() throws {
        let values = TMDBRecipe.values()
        let step = steps[0]
        let url = try step.url(baseURL: TMDBRecipe.recipe().baseURL, values: values)
        let request = try step.httpRequest(url: url, values: values, options: UpstreamOptions())
        #expect(request.method == "GET")
        #expect(request.url == "https://api.themoviedb.org/3/authentication/token/new?api_key=k-4f1e9a")
        #expect(request.body.isEmpty)
        // It reads JSON: it asks for it.
        #expect(request.fields["Accept"] == "application/json")
        #expect(request.fields["Content-Type"] == nil)
    }

    @Test func aJSONBodyIsEscapedAndKeepsTheConfiguredOrder() throws {
        let values = TMDBRecipe.values(captures: ["request_token": "tok\"en\\\n"], password: "p\"w")
        let step = steps[1]
        let request = try step.httpRequest(url: "https://h/validate", values: values, options: UpstreamOptions())
        #expect(request.fields["Content-Type"] == "application/json")
        #expect(String(decoding: request.body, as: UTF8.self)
            == #"{"username":"moviefan","password":"p\"w","request_token":"tok\"en\\\n"}"#)
    }

    @Test func literalsGoInTheJSONBodyAsJSON() throws {
        let body = RecipeJSONBody.object([
            ("n", .literal(.number(3))), ("f", .literal(.number(1.5))), ("b", .literal(.bool(false))), ("z", .literal(.null)),
            ("list", .array([.literal(.string("a")), .string(template("{secrets.username}"))])),
            ("nested", .object([("y", .literal(.number(2))), ("x", .array([.literal(.bool(true))]))])),
        ])
        #expect(String(decoding: try body.rendered(TMDBRecipe.values()), as: UTF8.self)
            == #"{"n":3,"f":1.5,"b":false,"z":null,"list":["a","moviefan"],"nested":{"y":2,"x":[true]}}"#)
    }

    @Test func aFormBodyAndHeadersAreRendered() throws {
        let step = RecipeStep(name: "login", request: RecipeRequest(
            method: "POST", url: template("session/{request_token}"),
            query: [RecipeField(name: "q", value: template("a b&c"))],
            headers: [RecipeField(name: "X-Key", value: template("{credentials.tmdb-key}")),
                      RecipeField(name: "Accept", value: template("text/plain"))],
            body: .form([RecipeField(name: "user", value: template("{secrets.username}")),
                         RecipeField(name: "pass", value: template("{secrets.password}"))])))
        let values = TMDBRecipe.values(captures: ["request_token": "a/b c"])
        let url = try step.url(baseURL: "https://h/api", values: values)
        #expect(url == "https://h/api/session/a%2Fb%20c")
        let request = try step.httpRequest(url: url + "?keep=1#frag", values: values, options: UpstreamOptions())
        #expect(request.url == "https://h/api/session/a%2Fb%20c?keep=1&q=a+b%26c")
        #expect(request.fields["X-Key"] == "k-4f1e9a")
        #expect(request.fields["Accept"] == "text/plain")
        #expect(request.fields["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(String(decoding: request.body, as: UTF8.self) == "user=moviefan&pass=pw-77%23secret")
    }

    @Test func aHeaderValueWithALineBreakIsRefused() {
        let step = RecipeStep(name: "s", request: RecipeRequest(method: "GET", url: template("x"),
                                                                headers: [RecipeField(name: "X-T", value: template("{request_token}"))]))
        #expect(throws: RecipeStepFailure.invalidHeader(name: "X-T")) {
            try step.httpRequest(url: "https://h/x", values: TMDBRecipe.values(captures: ["request_token": "a\r\nInjected: 1"]),
                                 options: UpstreamOptions())
        }
    }

    @Test func aMissingValueFailsTheStep() {
        #expect(throws: RecipeStepFailure.missing(.capture("request_token"))) {
            try steps[1].httpRequest(url: "https://h/x", values: TMDBRecipe.values(), options: UpstreamOptions())
        }
        #expect(throws: RecipeStepFailure.invalidURL) { try steps[0].url(baseURL: nil, values: TMDBRecipe.values()) }
    }

    @Test func aStepKnowsWhatItRendersFromAPerson() {
        #expect(steps[1].placeholders == [.credential("tmdb-key"), .secret("username"), .secret("password"), .capture("request_token")])
        let place = RecipeStepPlace(identity: "tmdb-user", step: steps[1], configPath: "identities.tmdb-user.steps[1]")
        #expect(place.provided == ["credentials.tmdb-key", "identities.tmdb-user.secrets.username", "identities.tmdb-user.secrets.password"])
    }
}
